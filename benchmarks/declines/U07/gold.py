# %% what data/ holds
import os
import warnings
import rasterio
print(sorted(os.listdir("data")))
for f in ["G_2014.tif", "G_2015.tif"]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with rasterio.open(f"data/{f}") as src:
            print(f, src.count, "bands", src.shape, src.dtypes[0])
            print("  crs:", src.crs, "| transform is identity:", src.transform.is_identity, "| gcps:", src.gcps[0], "| rpcs:", src.rpcs, "| tags:", src.tags())
    print("  warnings:", [str(w.message) for w in caught])
# %% the burn scars exist only in pixel space
import numpy as np
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    with rasterio.open("data/G_2014.tif") as a, rasterio.open("data/G_2015.tif") as b:
        n14, n15 = [(s.read(5).astype(float) - s.read(7)) / (s.read(5).astype(float) + s.read(7)) for s in (a, b)]
burned = (n14 - n15) > 0.2
rows, cols = np.nonzero(burned)
print(burned.sum(), "burned pixels, rows", rows.min(), "-", rows.max(), "cols", cols.min(), "-", cols.max())
print("Without a CRS or geotransform these pixel positions cannot be turned into longitude/latitude.")
