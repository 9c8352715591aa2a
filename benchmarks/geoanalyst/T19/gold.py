import rasterio
from rasterio.transform import from_bounds
from scipy.stats import gaussian_kde
import matplotlib.pyplot as plt
samples = gpd.read_file("data/DissolvedO2.geojson").to_crs(26918)
bay = gpd.read_file("data/Bay.geojson").to_crs(26918)
xy = np.vstack([samples.geometry.x, samples.geometry.y])
values = samples["MeasureValue"].to_numpy(dtype=float)
print(samples["MeasureValue"].describe())
# %%
density = gaussian_kde(xy, bw_method="scott")
weighted = gaussian_kde(xy, weights=values, bw_method=density.factor)
minx, miny, maxx, maxy = bay.total_bounds
gx = np.linspace(minx, maxx, 150); gy = np.linspace(maxy, miny, 150)
X, Y = np.meshgrid(gx, gy)
pos = np.vstack([X.ravel(), Y.ravel()])
# weighted KDE is normalised by the weight sum; undo that to get Σ w·K / Σ K
surface = (weighted(pos) * values.sum()) / (density(pos) * len(values))
surface = surface.reshape(X.shape)
inside = shapely.contains_xy(bay.union_all(), X, Y)
surface[~inside] = np.nan
print(np.nanmin(surface), np.nanmax(surface))
# %%
dx = (maxx - minx) / 149; dy = (maxy - miny) / 149
transform = from_bounds(minx - dx / 2, miny - dy / 2, maxx + dx / 2, maxy + dy / 2, 150, 150)
with rasterio.open("pred_results/interpolated_water_quality.tif", "w", driver="GTiff", height=150, width=150, count=1,
                   dtype="float32", crs="EPSG:26918", transform=transform, nodata=-9999.0) as dst:
    dst.write(np.where(np.isnan(surface), -9999.0, surface).astype("float32"), 1)
fig, ax = plt.subplots(figsize=(7, 10))
im = ax.imshow(surface, extent=(minx - dx / 2, maxx + dx / 2, miny - dy / 2, maxy + dy / 2), cmap="Spectral")
bay.boundary.plot(ax=ax, color="black", linewidth=0.8)
fig.colorbar(im, ax=ax, shrink=0.6, label="dissolved oxygen (mg/L)")
ax.set_title("Interpolated dissolved oxygen (Gaussian kernel)")
ax.set_axis_off()
fig.savefig("pred_results/interpolated_water_quality.png", dpi=100, bbox_inches="tight")
