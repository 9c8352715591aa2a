df = pd.read_csv("data/incidents.csv")
incidents = gpd.GeoDataFrame(df, geometry=gpd.points_from_xy(df["lon"], df["lat"]), crs=4326).to_crs(32616)
sizes = [len(incidents), incidents.crs.to_epsg()]
# %%
incidents["date"] = pd.to_datetime(incidents["date"])
per_weekday = {k: int(v) for k, v in incidents.groupby(incidents["date"].dt.day_name()).size().items()}
# %%
from scipy.spatial import cKDTree
xy = np.column_stack([incidents.geometry.x, incidents.geometry.y])
nn = cKDTree(xy).query(xy, k=2)[0][:, 1]
A = incidents.union_all().convex_hull.area
clark_evans = round(float(nn.mean() / (0.5 / np.sqrt(len(xy) / A))), 4)
# %%
pairs_250 = len(cKDTree(xy).query_pairs(250))
# %%
x0, y0 = xy.min(axis=0)
nx_, ny_ = int(np.ceil((xy[:, 0].max() - x0) / 500)) or 1, int(np.ceil((xy[:, 1].max() - y0) / 500)) or 1
counts, _, _ = np.histogram2d(xy[:, 0], xy[:, 1], bins=[nx_, ny_], range=[[x0, x0 + 500 * nx_], [y0, y0 + 500 * ny_]])
max_cell = int(counts.max())
# %%
from scipy.stats import gaussian_kde
density = gaussian_kde(xy.T)(xy.T)
densest = int(incidents["incident_id"].iloc[int(density.argmax())])
# %%
standard_distance_m = round(float(np.sqrt(((xy - xy.mean(axis=0)) ** 2).sum(axis=1).mean())), 1)
# %%
category_share = {k: round(float(v * 100), 2) for k, v in incidents["category"].value_counts(normalize=True).items()}
# %%
hull_km2 = round(float(A / 1e6), 4)
# %%
theft = incidents["category"] == "theft"
theft_centre = [round(float(xy[theft.to_numpy(), 0].mean()), 1), round(float(xy[theft.to_numpy(), 1].mean()), 1)]
# %%
assault = (incidents["category"] == "assault").to_numpy()
assault_to_theft_m = round(float(cKDTree(xy[theft.to_numpy()]).query(xy[assault])[0].mean()), 1)
