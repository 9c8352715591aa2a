# %% what data/ holds
import os
import re
import rasterio
files = sorted(os.listdir("data"))
print(files)
for f in files:
    with rasterio.open(f"data/{f}") as src:
        print(f, src.count, "band(s)", src.shape, src.crs, "| descriptions:", src.descriptions, "| tags:", src.tags())
# %% which years do the surfaces cover?
years = sorted({int(m) for f in files for m in re.findall(r"\.(\d{4})\.tif$", f)})
print("prevalence years:", years)
print("2010 present:", 2010 in years)
