import rasterio
from rasterio.features import shapes
from shapely.geometry import shape
with rasterio.open("data/Elevation_2050.tif") as src:
    elev = src.read(1); profile = src.profile
flooded = elev <= -200
depth = np.where(flooded, np.trunc((elev + 200) * -1), 0).astype("int32")
profile.update(dtype="int32", nodata=0)
with rasterio.open("pred_results/flood_depth_2050.tif", "w", **profile) as dst:
    dst.write(depth, 1)
print(flooded.sum(), "flooded cells, max depth", depth.max())
# %% polygons, selection, damage
polys = gpd.GeoDataFrame.from_features(
    [{"type": "Feature", "properties": {"gridcode": v}, "geometry": g} for g, v in shapes(depth, mask=depth > 0, transform=profile["transform"])],
    crs=profile["crs"])
buildings = gpd.read_file("data/StudyAreaBuildings.shp").reset_index(names="building")
hits = gpd.sjoin(buildings, polys, predicate="intersects")
summary = hits.groupby("building").gridcode.mean().rename("MEAN_depth").reset_index()
table = buildings.merge(summary, on="building")
table["damage"] = np.where(table.MEAN_depth > 1, (0.298 * np.log(0.01 * table.MEAN_depth) + 1.4502) * 271 * table.Shape_Area, 0.0)
table[["building", "Shape_Area", "MEAN_depth", "damage"]].to_csv("pred_results/building_damage.csv", index=False)
print(len(table), "buildings; damage", round(table.damage.sum()))
