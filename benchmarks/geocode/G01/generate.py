# Parks, homes and districts of a synthetic town in UTM zone 33N, written
# as GeoJSON in WGS 84 (as open data portals publish them).
r = rng()
x0, y0 = 500000.0, 5800000.0
districts = gpd.GeoDataFrame(
    {"district": ["Altstadt", "Nordend", "Ostpark", "Südhang"]},
    geometry=grid_cells(x0, y0, x0 + 4000, y0 + 4000, 2, 2),
    crs=32633,
)
parks = []
for i, (cx, cy, rad) in enumerate([(800, 900, 250), (2900, 1100, 400), (1500, 3100, 300), (3300, 3300, 180), (2100, 2000, 120)]):
    parks.append(organic_polygon(x0 + cx, y0 + cy, rad, r))
parks = gpd.GeoDataFrame({"park": [f"P{i + 1}" for i in range(len(parks))], "kind": ["city", "city", "pocket", "pocket", "pocket"]}, geometry=parks, crs=32633)
xy = r.uniform(0, 4000, (400, 2))
homes = gpd.GeoDataFrame({"home_id": np.arange(1, 401), "residents": r.integers(1, 6, 400)}, geometry=gpd.points_from_xy(x0 + xy[:, 0], y0 + xy[:, 1]), crs=32633)
for name, layer in [("districts", districts), ("parks", parks), ("homes", homes)]:
    layer.to_crs(4326).to_file(f"data/{name}.geojson", driver="GeoJSON")
