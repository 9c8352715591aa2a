df = pd.read_csv("data/incidents.csv")
incidents = gpd.GeoDataFrame(df, geometry=gpd.points_from_xy(df["lon"], df["lat"]), crs=4326).to_crs(32616)
# %%
from sklearn.cluster import DBSCAN
xy = np.column_stack([incidents.geometry.x, incidents.geometry.y])
incidents["cluster"] = DBSCAN(eps=400, min_samples=8).fit_predict(xy)
# %%
n_clusters = incidents.loc[incidents["cluster"] >= 0, "cluster"].nunique()
n_noise = int((incidents["cluster"] == -1).sum())
# %%
groups = incidents[incidents["cluster"] >= 0].groupby("cluster")
hulls = gpd.GeoDataFrame({"cluster": list(groups.groups), "count": groups.size().to_numpy(), "geometry": [g.union_all().convex_hull for _, g in groups]}, crs=incidents.crs)
hulls["area_m2"] = hulls.area
hulls = hulls.sort_values("count", ascending=False).reset_index(drop=True)
# %%
largest = incidents[incidents["cluster"] == hulls.loc[0, "cluster"]]
theft_share = round(float((largest["category"] == "theft").mean() * 100), 2)
# %%
largest_hull_km2 = round(float(hulls.loc[0, "area_m2"] / 1e6), 4)
# %%
clustered = incidents[incidents["cluster"] >= 0]
xy_c = pd.DataFrame({"x": clustered.geometry.x, "y": clustered.geometry.y, "c": clustered["cluster"]})
centre = xy_c.groupby("c")[["x", "y"]].transform("mean")
mean_spread = round(float(np.hypot(xy_c["x"] - centre["x"], xy_c["y"] - centre["y"]).mean()), 1)
# %%
noise_share = round(float((incidents["cluster"] == -1).mean() * 100), 2)
# %%
largest_categories = sorted(largest["category"].unique().tolist())
