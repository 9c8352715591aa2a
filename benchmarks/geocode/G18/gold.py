df = pd.read_csv("data/stations.csv")
stations = gpd.GeoDataFrame(df, geometry=gpd.points_from_xy(df["lon"], df["lat"]), crs=4326).to_crs(3857)
# %%
from scipy.spatial import cKDTree
xy = np.column_stack([stations.geometry.x, stations.geometry.y])
d, _ = cKDTree(xy).query(xy, k=2)
mean_nn_km = round(float(d[:, 1].mean() / 1000), 3)
# %%
xk, yk = xy[:, 0] / 1000, xy[:, 1] / 1000
A = np.column_stack([np.ones(len(xk)), xk, yk])
trend = [float(v) for v in np.linalg.lstsq(A, stations["temp_c"].to_numpy(), rcond=None)[0]]
# %%
residual = stations["temp_c"].to_numpy() - A @ np.array(trend)
rmse_trend = round(float(np.sqrt((residual ** 2).mean())), 4)
# %%
outlier = str(stations["station"].iloc[int(np.abs(residual).argmax())])
# %%
north = stations["lat"] > stations["lat"].median()
north_minus_south = round(float(stations.loc[north, "temp_c"].mean() - stations.loc[~north, "temp_c"].mean()), 3)
# %%
covered_km2 = round(float(stations.buffer(20000).union_all().area / 1e6), 1)
# %%
hull_km2 = round(float(stations.union_all().convex_hull.area / 1e6), 1)
# %%
dd, ii = cKDTree(xy).query(xy, k=2)
k = int(dd[:, 1].argmin())
nearest_pair = sorted([str(stations["station"].iloc[k]), str(stations["station"].iloc[int(ii[k, 1])])])
# %%
from scipy.spatial import ConvexHull
hull_stations = len(ConvexHull(xy).vertices)
# %%
cx, cy = xy.mean(axis=0)
q = np.where(xy[:, 1] > cy, "N", "S").astype(object) + np.where(xy[:, 0] > cx, "E", "W").astype(object)
quadrant_temp = {k: round(float(v), 3) for k, v in stations.assign(q=q).groupby("q")["temp_c"].mean().items()}
