homes = gpd.read_file("data/homes.geojson").to_crs(32633)
parks = gpd.read_file("data/parks.geojson").to_crs(32633)
districts = gpd.read_file("data/districts.geojson").to_crs(32633)
# %%
district_km2 = {d: round(float(g.area / 1e6), 3) for d, g in zip(districts["district"], districts.geometry)}
# %%
homes = gpd.sjoin(homes, districts[["district", "geometry"]], predicate="within").drop(columns="index_right")
residents_by_district = {k: int(v) for k, v in homes.groupby("district")["residents"].sum().items()}
# %%
density = {d: round(residents_by_district[d] / (g.area / 1e6), 1) for d, g in zip(districts["district"], districts.geometry)}
# %%
pieces = gpd.overlay(districts[["district", "geometry"]], parks[["park", "geometry"]], how="intersection")
covered = pieces.assign(a=pieces.area).groupby("district")["a"].sum()
park_share = {d: round(float(covered.get(d, 0.0) / g.area * 100), 2) for d, g in zip(districts["district"], districts.geometry)}
# %%
nearest = gpd.sjoin_nearest(homes[["home_id", "residents", "geometry"]], parks[["park", "kind", "geometry"]])
nearest = nearest.drop_duplicates("home_id")
park_load = {k: int(v) for k, v in nearest.groupby("park")["residents"].sum().items()}
# %%
busiest_park = max(park_load, key=park_load.get)
# %%
city_share = round(float(nearest.loc[nearest["kind"] == "city", "residents"].sum() / nearest["residents"].sum() * 100), 2)
# %%
far_homes = int((homes.distance(parks.union_all()) > 500).sum())
# %%
district_parks = {d: int(parks.intersects(g).sum()) for d, g in zip(districts["district"], districts.geometry)}
# %%
mean_residents = {k: round(float(v), 3) for k, v in homes.groupby("district")["residents"].mean().items()}
