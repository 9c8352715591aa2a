# %% what data/ holds
import os
import geopandas as gpd
files = sorted(os.listdir("data"))
print(files)
print(".prj files:", [f for f in files if f.endswith(".prj")] or "none")
# %% CRS and coordinates of both layers
for name in ("etobicoke", "fire_stations"):
    g = gpd.read_file(f"data/{name}.shp")
    print(name, len(g), "features | crs:", g.crs, "| bounds:", g.total_bounds.round(0), "| columns:", list(g.columns))
hoods = gpd.read_file("data/etobicoke.shp")
minx, miny, maxx, maxy = hoods.total_bounds
print("extent:", round(maxx - minx), "x", round(maxy - miny), "units of an unknown length; origin unknown")
print("Nothing says whether a unit is a metre, a foot or anything else, so 2,500 m cannot be expressed in these coordinates.")
