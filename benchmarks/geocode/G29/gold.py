rivers = gpd.read_file("data/rivers.geojson")
roads = gpd.read_file("data/roads.geojson")
parcels = gpd.read_file("data/parcels.geojson")
sizes = [len(rivers), len(roads), len(parcels)]
# %%
road_km = round(float(roads.length.sum() / 1000), 3)
# %%
from shapely.geometry import Point
sinuosity = [g.length / Point(g.coords[0]).distance(Point(g.coords[-1])) for g in rivers.geometry]
mean_sinuosity = round(float(np.mean(sinuosity)), 4)
# %%
river_parcels = int(parcels.intersects(rivers.union_all()).sum())
# %%
owner_mean_ha = {k: round(float(v / 10000), 4) for k, v in parcels.assign(a=parcels.area).groupby("owner")["a"].mean().items()}
# %%
cents = gpd.GeoDataFrame(parcels[["parcel_id"]], geometry=parcels.centroid, crs=parcels.crs)
nr = gpd.sjoin_nearest(cents, rivers[["river_id", "geometry"]]).drop_duplicates("parcel_id")
nearest_river_counts = {str(k): int(v) for k, v in nr.groupby("river_id").size().items()}
# %%
from shapely.ops import split
river_union = rivers.union_all()
n_road_pieces = int(sum(len(split(g, river_union).geoms) for g in roads.geometry))
# %%
road_zone = roads.buffer(15).union_all()
road_cover_pct = round(float(parcels.intersection(road_zone).area.sum() / parcels.area.sum() * 100), 2)
# %%
longest_river = str(rivers["river_id"].iloc[int(rivers.length.argmax())])
# %%
parcels_on_roads = int(parcels.intersects(road_zone).sum())
# %%
mean_compactness = round(float((4 * np.pi * parcels.area / parcels.length ** 2).mean()), 4)
