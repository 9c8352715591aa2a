import rasterio
from rasterio.transform import from_origin
from scipy.stats import gaussian_kde
from sklearn.cluster import DBSCAN
elk = gpd.read_file("data/Elk_in_Southwestern_Alberta_2009.geojson").to_crs(32612)
hulls = gpd.GeoDataFrame(elk.dissolve("ind_ident").convex_hull.rename("geometry").reset_index(), geometry="geometry", crs=32612)
hulls["area_km2"] = (hulls.area / 1e6).round(2)
hulls.to_file("pred_results/elk_home_ranges.geojson", driver="GeoJSON")
print(hulls[["ind_ident", "area_km2"]])
# %% density raster
minx, miny, maxx, maxy = elk.total_bounds
left, top = np.floor(minx / 250) * 250 - 1000, np.ceil(maxy / 250) * 250 + 1000
cols = int(np.ceil((maxx + 1000 - left) / 250)); rows = int(np.ceil((top - (miny - 1000)) / 250))
xs = left + 125 + 250 * np.arange(cols); ys = top - 125 - 250 * np.arange(rows)
gx, gy = np.meshgrid(xs, ys)
kde = gaussian_kde(np.c_[elk.geometry.x, elk.geometry.y].T)
dens = kde(np.vstack([gx.ravel(), gy.ravel()])).reshape(rows, cols).astype("float32")
with rasterio.open("pred_results/elk_density.tif", "w", driver="GTiff", width=cols, height=rows, count=1,
                   dtype="float32", crs="EPSG:32612", transform=from_origin(left, top, 250, 250)) as dst:
    dst.write(dens, 1)
# %% clusters
elk["cluster"] = DBSCAN(eps=1000, min_samples=30).fit_predict(np.c_[elk.geometry.x, elk.geometry.y])
elk.to_file("pred_results/elk_clusters.geojson", driver="GeoJSON")
print(elk.cluster.value_counts())
