import rasterio
from pyproj import Geod, Transformer
import matplotlib.pyplot as plt
with rasterio.open("data/AtlanticDEM.tif") as src:
    dem = src.read(1, masked=True).astype("float64").filled(np.nan); profile = src.profile; transform = src.transform; crs = src.crs
paths = gpd.read_file("data/tsunami_paths.geojson")
depth = np.where(dem < 0, -dem, np.nan)
speed = np.sqrt(9.80665 * depth)
profile.update(dtype="float32", nodata=-9999.0)
with rasterio.open("pred_results/tsunami_speed.tif", "w", **profile) as dst:
    dst.write(np.where(np.isnan(speed), -9999.0, speed).astype("float32"), 1)
print(np.nanmin(speed), np.nanmax(speed))
# %%
geod = Geod(ellps="WGS84")
to_albers = Transformer.from_crs(4326, crs, always_xy=True)
rows = []
dense_lines = []
for route, line in zip(paths["Route"], paths.geometry):
    (x0, y0), (x1, y1) = line.coords[0], line.coords[-1]
    length = geod.inv(x0, y0, x1, y1)[2]
    n = int(np.ceil(length / 10_000))
    pts = [(x0, y0)] + geod.npts(x0, y0, x1, y1, n - 1) + [(x1, y1)]
    lon, lat = np.array(pts).T
    seg = geod.inv(lon[:-1], lat[:-1], lon[1:], lat[1:])[2]
    ax_, ay_ = to_albers.transform(lon, lat)
    r_, c_ = rasterio.transform.rowcol(transform, ax_, ay_)
    v = speed[np.clip(r_, 0, speed.shape[0] - 1), np.clip(c_, 0, speed.shape[1] - 1)]
    v = pd.Series(v).ffill().bfill().to_numpy()    # an end on a coastal land cell takes its neighbour's speed
    hours = np.sum(seg / ((v[:-1] + v[1:]) / 2)) / 3600
    rows.append({"Route": route, "length_km": round(seg.sum() / 1000, 1), "travel_time_h": round(hours, 2)})
    dense_lines.append(shapely.LineString(np.c_[ax_, ay_]))
times = pd.DataFrame(rows).sort_values("travel_time_h")
times.to_csv("pred_results/tsunami_travel_times.csv", index=False)
print(times)
# %%
fig, ax = plt.subplots(figsize=(12, 9))
left, top = transform.c, transform.f
extent = (left, left + transform.a * dem.shape[1], top + transform.e * dem.shape[0], top)
im = ax.imshow(speed, extent=extent, cmap="viridis")
ax.imshow(np.where(np.isnan(speed), 1.0, np.nan), extent=extent, cmap="Greys", vmin=0, vmax=2)
for line, row in zip(dense_lines, rows):
    ax.plot(*line.xy, color="red", linewidth=1)
    ax.annotate(f"{row['Route'].split(' to ')[1]}: {row['travel_time_h']:.1f} h", line.coords[-1], fontsize=8, color="black",
                bbox=dict(facecolor="white", alpha=0.7, pad=1))
fig.colorbar(im, ax=ax, shrink=0.7, label="tsunami speed (m/s)")
ax.set_title("Tsunami speed and travel times from an origin off Portugal")
ax.set_axis_off()
fig.savefig("pred_results/tsunami_travel_times.png", dpi=100, bbox_inches="tight")
