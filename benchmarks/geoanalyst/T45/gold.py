import rasterio
from scipy.ndimage import maximum_filter, minimum_filter
with rasterio.open("data/Elevation.tif") as src:
    elev = src.read(1).astype("float64"); profile = src.profile
rng_ = maximum_filter(elev, 3) - minimum_filter(elev, 3)
cost = 1 + 9 * (rng_ - rng_.min()) / (rng_.max() - rng_.min())
profile.update(dtype="float32", nodata=None)
with rasterio.open("pred_results/ruggedness_cost.tif", "w", **profile) as dst:
    dst.write(cost.astype("float32"), 1)
print(cost.min(), cost.max(), cost.mean())
