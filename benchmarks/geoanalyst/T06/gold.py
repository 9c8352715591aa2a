import matplotlib.pyplot as plt
from scipy.stats import gaussian_kde
from sklearn.cluster import DBSCAN
elk = gpd.read_file("data/Elk_in_Southwestern_Alberta_2009.geojson").to_crs(32612)
print(len(elk), elk.ind_ident.nunique())
hulls = elk.dissolve("ind_ident").convex_hull.rename("geometry").reset_index()
hulls = gpd.GeoDataFrame(hulls, geometry="geometry", crs=32612)
print((hulls.area / 1e6).round(1).tolist(), "km²")
# %% density and clusters
xy = np.c_[elk.geometry.x, elk.geometry.y]
kde = gaussian_kde(xy.T)
minx, miny, maxx, maxy = elk.total_bounds
gx, gy = np.meshgrid(np.linspace(minx, maxx, 150), np.linspace(miny, maxy, 150))
dens = kde(np.vstack([gx.ravel(), gy.ravel()])).reshape(gx.shape)
elk["cluster"] = DBSCAN(eps=1000, min_samples=30).fit_predict(xy)
print(elk.cluster.value_counts().sort_index())
# %% map
fig, ax = plt.subplots(figsize=(10, 9))
ax.imshow(dens, origin="lower", extent=[minx, maxx, miny, maxy], cmap="YlOrBr", alpha=0.8)
hulls.boundary.plot(ax=ax, color="black", linewidth=1)
clustered = elk[elk.cluster >= 0]
ax.scatter(clustered.geometry.x, clustered.geometry.y, c=clustered.cluster, cmap="tab10", s=4)
ax.set_title("Elk home ranges: convex hulls, kernel density and DBSCAN clusters")
fig.savefig("pred_results/Elk_Analysis.png", dpi=110, bbox_inches="tight")
