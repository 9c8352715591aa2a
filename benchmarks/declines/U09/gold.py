# %% what data/ holds
import os
import pandas as pd
import geopandas as gpd
files = sorted(os.listdir("data"))
print(files)
print(".prj files:", [f for f in files if f.endswith(".prj")] or "none")
# %% the samples: columns and coordinate ranges
samples = pd.read_csv("data/DissolvedO2.csv")
print(len(samples), "samples, columns:", list(samples.columns))
print(samples[["x", "y", "MeasureValue"]].describe().loc[["min", "max"]])
print("latitude/longitude columns:", [c for c in samples.columns if c.lower() in ("lat", "lon", "latitude", "longitude")] or "none")
# %% the bay outline
bay = gpd.read_file("data/Bay.shp")
print("Bay.shp crs:", bay.crs, "| bounds:", bay.total_bounds.round(0))
print("x/y are on a local grid with no stated system, origin or unit: they cannot be placed in EPSG:26918.")
