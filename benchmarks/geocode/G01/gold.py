homes = gpd.read_file("data/homes.geojson").to_crs(32633)
parks = gpd.read_file("data/parks.geojson").to_crs(32633)
districts = gpd.read_file("data/districts.geojson").to_crs(32633)
# %%
walk_zone = parks.buffer(400).union_all()
# %%
homes["near_park"] = homes.within(walk_zone)
pct_near = homes["near_park"].mean() * 100
# %%
residents_near = homes.loc[homes["near_park"], "residents"].sum()
# %%
homes = gpd.sjoin(homes, districts[["district", "geometry"]], predicate="within").drop(columns="index_right")
district_share = (homes.groupby("district")["near_park"].mean() * 100).round(1).to_dict()
# %%
worst_district = min(district_share, key=district_share.get)
# %%
far = homes[~homes["near_park"]]
mean_dist_m = round(float(far.distance(parks.union_all()).mean()), 1)
# %%
park_points = gpd.GeoDataFrame(geometry=parks.centroid, crs=parks.crs)
in_district = gpd.sjoin(park_points, districts[["district", "geometry"]], predicate="within")
parks_per_district = {d: int((in_district["district"] == d).sum()) for d in districts["district"]}
# %%
park_perimeter_km = round(float(parks.length.sum() / 1000), 3)
# %%
kind_area_ha = {k: round(float(v / 10000), 2) for k, v in parks.assign(a=parks.area).groupby("kind")["a"].sum().items()}
