rivers = gpd.read_file("data/rivers.geojson")
roads = gpd.read_file("data/roads.geojson")
parcels = gpd.read_file("data/parcels.geojson")
length_by_order = {str(k): round(float(v) / 1000, 3) for k, v in rivers.assign(l=rivers.length).groupby("order")["l"].sum().items()}
# %%
pts = []
for r_geom in rivers.geometry:
    for road_geom in roads.geometry:
        x = r_geom.intersection(road_geom)
        if not x.is_empty:
            pts.extend(getattr(x, "geoms", [x]))
bridges = gpd.GeoDataFrame(geometry=pts, crs=rivers.crs)
n_bridges = len(bridges)
# %%
widths = np.where(rivers["order"] == 3, 100, 50)
riparian = rivers.buffer(widths).union_all()
# %%
parcels["riparian_m2"] = parcels.intersection(riparian).area
affected = int((parcels["riparian_m2"] > 0).sum())
# %%
owner_share = {k: round(float(v / riparian.area * 100), 2) for k, v in parcels.groupby("owner")["riparian_m2"].sum().items()}
# %%
most = parcels.loc[parcels["riparian_m2"].idxmax()].geometry.centroid
nearest_bridge_m = round(float(bridges.distance(most).min()), 1)
# %%
road_km_in_riparian = round(float(roads.clip(riparian).length.sum() / 1000), 3)
