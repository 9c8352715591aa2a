# %% what data/ holds
import os
import rasterio
files = sorted(os.listdir("data"))
print(files)
for f in files:
    with rasterio.open(f"data/{f}") as src:
        print(f, src.count, "band(s)", src.shape, src.crs, src.dtypes[0], src.descriptions, src.tags())
# %% a soil layer?
words = ("soil", "ssurgo", "statsgo", "kfact", "kffact", "erod", "mupolygon")
print("soil-like files:", [f for f in files if any(w in f.lower() for w in words)] or "none")
print("Burn severity and slope can be computed; the soil erodibility (30 % of the weight) has no source here.")
