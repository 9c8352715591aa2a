buildings = gpd.read_file("data/buildings.shp")
with rasterio.open("data/flood_depth.tif") as src:
    depth = src.read(1).astype("float64")
    transform = src.transform
sizes = [len(buildings), depth.shape[0], depth.shape[1]]
# %%
footprint_m2 = round(float(buildings.area.sum()), 1)
# %%
from rasterio.transform import rowcol
cent = buildings.centroid
rr, cc = rowcol(transform, cent.x.to_numpy(), cent.y.to_numpy())
buildings["centroid_depth"] = depth[np.asarray(rr), np.asarray(cc)]
wet_centroids = int((buildings["centroid_depth"] > 0).sum())
# %%
wet = depth[depth > 0]
depth_classes = {"0-0.5": int((wet <= 0.5).sum()), "0.5-1": int(((wet > 0.5) & (wet <= 1)).sum()), "1-2": int(((wet > 1) & (wet <= 2)).sum()), ">2": int((wet > 2).sum())}
# %%
from rasterio.features import shapes
from shapely.geometry import shape
wet_mask = (depth > 0).astype("uint8")
flood_polys = gpd.GeoDataFrame(geometry=[shape(g) for g, v in shapes(wet_mask, mask=wet_mask.astype(bool), transform=transform, connectivity=4) if v == 1], crs=32615)
n_flood_polys = len(flood_polys)
# %%
largest_flood_ha = round(float(flood_polys.area.max() / 10000), 4)
# %%
extent = flood_polys.union_all()
d = buildings.distance(extent)
near_flood = int(((d > 0) & (d <= 10)).sum())
# %%
from rasterstats import zonal_stats
means = [s["mean"] if s["mean"] is not None else -1 for s in zonal_stats(buildings, depth, affine=transform, stats=["mean"], nodata=-1)]
deepest_building = str(buildings["bldg_id"].iloc[int(np.argmax(means))])
# %%
flooded_value = round(float(buildings.loc[buildings.intersects(extent), "value_usd"].sum()))
# %%
depth_p90 = round(float(np.percentile(depth[depth > 0], 90)), 3)
# %%
buildings["wet"] = buildings.intersects(extent)
use_wet_share = {k: round(float(v * 100), 2) for k, v in buildings.groupby("use")["wet"].mean().items()}
