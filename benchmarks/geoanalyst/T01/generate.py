# Madison: temperature sample points (EPSG:4326) over a warm core, block groups with elderly density.
r = rng()
cx, cy = 305_000.0, 4_771_000.0
city = organic_polygon(cx, cy, 9_000, r, 0.2)
zones = voronoi_cells(city, 90, r)
pts = points_in(city.buffer(1500), 60, r)
xs = np.array([p.x for p in pts]); ys = np.array([p.y for p in pts])
d_core = np.hypot(xs - (cx + 1500), ys - (cy - 800))
temp = 78 + 12 * np.exp(-(d_core / 5000) ** 2) + 0.00025 * (xs - cx) + r.normal(0, 0.6, len(xs))
t = gpd.GeoDataFrame({"OBJECTID": np.arange(1, len(pts) + 1), "SID": [f"S{i:03d}" for i in range(len(pts))],
                      "TemperatureF": temp.round(2)}, geometry=pts, crs=32616).to_crs(4326)
t.insert(2, "LATITUDE", t.geometry.y.round(6)); t.insert(3, "LONGITUDE", t.geometry.x.round(6))
t.to_file("data/Temperature.geojson", driver="GeoJSON")
zg = gpd.GeoDataFrame(geometry=zones, crs=32616)
c = zg.geometry.centroid
old_centres = [(cx - 4000, cy + 3000), (cx + 2000, cy - 1500), (cx + 5000, cy + 4000)]
elder = sum(np.exp(-((c.x - ox) ** 2 + (c.y - oy) ** 2) / (2 * 2000**2)) for ox, oy in old_centres)
pop = r.integers(600, 2500, len(zg))
over65 = np.round(pop * (0.06 + 0.3 * elder / elder.max())).astype(int)
sqmi = zg.geometry.area / 2_589_988.0
zg["OBJECTID"] = np.arange(1, len(zg) + 1)
zg["Block_Groups_TOTPOP10"] = pop
zg["Block_Groups_PopOver65"] = over65
zg["Block_Groups_Over65Density"] = (over65 / sqmi).round(2)
zg["Shape_Length"] = zg.geometry.length.round(2)
zg["Shape_Area"] = zg.geometry.area.round(2)
zg[["OBJECTID", "Block_Groups_TOTPOP10", "Block_Groups_PopOver65", "Block_Groups_Over65Density",
    "Shape_Length", "Shape_Area", "geometry"]].to_crs(4326).to_file("data/CensusBlock.geojson", driver="GeoJSON")
