# %% what data/ holds
import os
import geopandas as gpd
print(sorted(os.listdir("data")))
hoods = gpd.read_file("data/etobicoke.geojson")
stations = gpd.read_file("data/fire_stations.geojson")
print("etobicoke.geojson:", len(hoods), "features,", hoods.crs, list(hoods.columns))
print("fire_stations.geojson:", len(stations), "features,", stations.crs, list(stations.columns))
# %% is there any population to apportion?
print(hoods.drop(columns="geometry").head())
words = ("pop", "resident", "people", "inhab", "persons", "census", "household")
found = [c for g in (hoods, stations) for c in g.columns if any(w in c.lower() for w in words)]
print("population-like columns:", found or "none")
print("Only the uncovered area could be measured; no population figure exists to turn it into residents.")
