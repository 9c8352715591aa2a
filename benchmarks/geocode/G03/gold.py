df = pd.read_csv("data/stations.csv")
stations = gpd.GeoDataFrame(df, geometry=gpd.points_from_xy(df["lon"], df["lat"]), crs=4326).to_crs(3857)
# %%
minx, miny, maxx, maxy = stations.total_bounds
xs = np.arange(minx, maxx, 2000) + 1000
ys = np.arange(miny, maxy, 2000) + 1000
gx, gy = np.meshgrid(xs, ys)
# %%
from scipy.interpolate import griddata
pts = np.column_stack([stations.geometry.x, stations.geometry.y])
vals = stations["temp_c"].to_numpy()
surface = griddata(pts, vals, (gx, gy), method="linear")
# %%
nearest = griddata(pts, vals, (gx, gy), method="nearest")
filled = np.where(np.isnan(surface), nearest, surface)
t_min, t_max = filled.min(), filled.max()
# %%
errors = []
for i in range(len(pts)):
    keep = np.arange(len(pts)) != i
    est = griddata(pts[keep], vals[keep], pts[i:i + 1], method="linear")[0]
    if np.isnan(est):
        est = griddata(pts[keep], vals[keep], pts[i:i + 1], method="nearest")[0]
    errors.append(est - vals[i])
rmse = float(np.sqrt(np.mean(np.square(errors))))
# %%
d = np.hypot(gx[..., None] - pts[:, 0], gy[..., None] - pts[:, 1])
w = 1.0 / np.maximum(d, 1e-9) ** 2
idw_surface = (w * vals).sum(-1) / w.sum(-1)
idw_mean = round(float(idw_surface.mean()), 3)
# %%
max_diff = round(float(np.abs(filled - idw_surface).max()), 3)
# %%
warmest = str(stations.loc[stations["temp_c"].idxmax(), "station"])
# %%
nan_share = round(float(np.isnan(surface).mean() * 100), 2)
