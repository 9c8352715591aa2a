# %% what data/ holds
import os
import geopandas as gpd
print(sorted(os.listdir("data")))
crashes = gpd.read_file("data/fatal_collisions.geojson")
boroughs = gpd.read_file("data/nyc_boroughs.geojson")
print("fatal_collisions.geojson:", len(crashes), "crashes,", crashes.crs, list(crashes.columns))
print("nyc_boroughs.geojson:", len(boroughs), "boroughs,", list(boroughs.columns))
# %% is there a count by kind of road user?
print(crashes.drop(columns="geometry").head())
words = ("pedestrian", "cyclist", "bicycl", "motorist", "victim", "user")
print("road-user columns:", [c for c in crashes.columns if any(w in c.lower() for w in words)] or "none")
print("persons killed in total:", int(crashes["NUMBER OF PERSONS KILLED"].sum()), "- not broken down by road user")
