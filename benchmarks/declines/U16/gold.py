# %% what data/ holds
import os
import numpy as np
import geopandas as gpd
import rasterio
from rasterio.features import rasterize
print(sorted(os.listdir("data")))
parcels = gpd.read_file("data/parcels.shp")
with rasterio.open("data/impervious.tif") as src:
    imp = src.read(1); transform = src.transform; res = src.res
    print("impervious.tif:", src.crs, src.shape, res, "| parcels:", len(parcels), parcels.crs, list(parcels.columns))
# %% the impervious share of every parcel
zones = rasterize(((g, i + 1) for i, g in enumerate(parcels.geometry)), out_shape=imp.shape, transform=transform, fill=0, dtype="int32")
cell = res[0] * res[1]
v1 = np.array([(imp[zones == i + 1] == 1).sum() * cell for i in range(len(parcels))])
v0 = np.array([(imp[zones == i + 1] == 0).sum() * cell for i in range(len(parcels))])
pct = v1 / (v0 + v1) * 100
print("PCT_IMPERV range:", pct.min().round(1), "-", pct.max().round(1))
# %% the rule: greater than 18 and at most 15
print("parcels > 18 %:", int((pct > 18).sum()), "| parcels <= 15 %:", int((pct <= 15).sum()), "| both:", int(((pct > 18) & (pct <= 15)).sum()))
print("No value is both above 18 and at most 15: the eligibility rule contradicts itself.")
