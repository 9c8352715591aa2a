# %% what data/ holds
import os
import geopandas as gpd
print(sorted(os.listdir("data")))
hk = gpd.read_file("data/hkg_constituency.shp")
target = gpd.read_file("data/target_risk.shp")
print("hkg_constituency.shp:", len(hk), "constituencies,", hk.crs, list(hk.columns))
print("target_risk.shp:", list(target.columns))
# %% is there a vaccination attribute?
print(hk.drop(columns="geometry").describe().T[["min", "max"]])
words = ("vac", "dose", "immun", "jab", "protect")
print("vaccination-like columns:", [c for c in hk.columns if any(w in c.lower() for w in words)] or "none")
