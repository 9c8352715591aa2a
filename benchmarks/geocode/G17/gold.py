with rasterio.open("data/dem.tif") as src:
    dem = src.read(1).astype("float64")
    transform = src.transform
grid_info = [dem.shape[0], dem.shape[1], float(transform.a)]
# %%
elev_stats = [round(float(dem.min()), 2), round(float(dem.max()), 2), round(float(dem.mean()), 2)]
# %%
gy, gx = np.gradient(dem, 30.0)
slope = np.arctan(np.hypot(gx, gy))
aspect = np.arctan2(gy, -gx)
zenith = np.radians(45.0)
az = np.radians((360 - 315 + 90) % 360)
shade = np.clip(255 * (np.cos(zenith) * np.cos(slope) + np.sin(zenith) * np.sin(slope) * np.cos(az - aspect)), 0, 255)
shade_mean = round(float(shade.mean()), 3)
# %%
p = np.pad(dem, 1, mode="edge")
r, c = dem.shape
total = np.zeros(dem.shape)
for dr in (-1, 0, 1):
    for dc in (-1, 0, 1):
        if dr or dc:
            total += (p[1 + dr:1 + dr + r, 1 + dc:1 + dc + c] - dem) ** 2
tri = np.sqrt(total)
tri_mean = round(float(tri.mean()), 3)
# %%
n_flat = int((np.degrees(slope) < 5).sum())
# %%
edges = np.linspace(dem.min(), dem.max(), 5)
elev_class = np.clip(np.digitize(dem, edges[1:-1]) + 1, 1, 4)
class_counts = {str(k): int((elev_class == k).sum()) for k in range(1, 5)}
# %%
from rasterio.features import rasterize
sheds = gpd.read_file("data/watersheds.shp")
order = {"W1": 1, "W2": 2, "W3": 3}
shed_grid = rasterize([(g, order[s]) for g, s in zip(sheds.geometry, sheds["shed_id"])], out_shape=dem.shape, transform=transform, fill=0, dtype="int32")
shed_max = {s: round(float(dem[shed_grid == k].max()), 2) for s, k in order.items()}
# %%
relief = {s: round(float(dem[shed_grid == k].max() - dem[shed_grid == k].min()), 2) for s, k in order.items()}
# %%
slope_deg = np.degrees(slope)
shed_mean_slope = {s: round(float(slope_deg[shed_grid == k].mean()), 3) for s, k in order.items()}
# %%
steep_share_by_class = {str(k): round(float((slope_deg[elev_class == k] > 15).mean() * 100), 2) for k in range(1, 5)}
# %%
os.makedirs("pred_results", exist_ok=True)
with rasterio.open("pred_results/tri.tif", "w", driver="GTiff", width=dem.shape[1], height=dem.shape[0], count=1, dtype="float32", crs="EPSG:32610", transform=transform) as dst:
    dst.write(tri.astype("float32"), 1)
with rasterio.open("pred_results/tri.tif") as src:
    tri_file_mean = round(float(src.read(1).astype("float64").mean()), 3)
