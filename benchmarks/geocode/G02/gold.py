with rasterio.open("data/dem.tif") as src:
    dem = src.read(1).astype("float64")
    transform = src.transform
    crs = src.crs
# %%
gy, gx = np.gradient(dem, 30.0)
slope = np.degrees(np.arctan(np.hypot(gx, gy)))
# %%
steep = slope > 15
steep_ha = steep.sum() * 30 * 30 / 10000
# %%
from rasterio.features import rasterize
sheds = gpd.read_file("data/watersheds.shp")
order = {"W1": 1, "W2": 2, "W3": 3}
shed_grid = rasterize([(g, order[s]) for g, s in zip(sheds.geometry, sheds["shed_id"])], out_shape=dem.shape, transform=transform, fill=0, dtype="int32")
# %%
mean_slope = {s: round(float(slope[shed_grid == k].mean()), 2) for s, k in order.items()}
# %%
os.makedirs("pred_results", exist_ok=True)
slope_path = "pred_results/slope.tif"
with rasterio.open(slope_path, "w", driver="GTiff", width=dem.shape[1], height=dem.shape[0], count=1, dtype="float32", crs=crs, transform=transform) as dst:
    dst.write(slope.astype("float32"), 1)
# %%
aspect = np.degrees(np.arctan2(-gx, gy)) % 360
west_share = round(float(((aspect >= 225) & (aspect <= 315) & steep).sum() / steep.sum() * 100), 2)
# %%
with rasterio.open(slope_path) as src:
    slope_file_max = round(float(src.read(1).max()), 3)
# %%
steep_by_shed = {s: round(float(steep[shed_grid == k].mean() * 100), 2) for s, k in order.items()}
# %%
max_slope = round(float(slope.max()), 3)
