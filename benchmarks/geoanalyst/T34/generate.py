# A Shikoku-like island (built in JGD2011 / UTM 53N, written in WGS 84):
# towns (urban around four cities, rural elsewhere), gridded population dense
# on the coastal plains, and all-season emergency roads.
r = rng()
crs = 6690
cx, cy = 390_000.0, 3_730_000.0
island = shapely.affinity.scale(organic_polygon(cx, cy, 55_000, r, irregularity=0.18, n=64), 2.0, 0.9, origin=(cx, cy))
cities = {"Matsuyama": (cx - 80_000, cy + 5_000), "Takamatsu": (cx + 40_000, cy + 35_000),
          "Tokushima": (cx + 90_000, cy + 10_000), "Kochi": (cx + 5_000, cy - 30_000)}
towns = voronoi_cells(island, 70, rng(1))
cent = np.array([[t.centroid.x, t.centroid.y] for t in towns])
dcity = np.min([np.hypot(cent[:, 0] - x, cent[:, 1] - y) for x, y in cities.values()], axis=0)
nearest = np.argmin([np.hypot(cent[:, 0] - x, cent[:, 1] - y) for x, y in cities.values()], axis=0)
pref = np.where(cent[:, 1] > cy + 10_000, np.where(cent[:, 0] > cx + 60_000, "Tokushima", "Kagawa"),
                np.where(cent[:, 0] < cx - 30_000, "Ehime", "Kochi"))
city_names = list(cities)
tgdf = gpd.GeoDataFrame({
    "OBJECTID": np.arange(1, len(towns) + 1), "JISCODE": [f"{36 + k % 4}{200 + k:03d}" for k in range(len(towns))],
    "PNAME": pref, "MEACODE": [f"{k + 1:05d}" for k in nearest], "MEANAME": [f"{city_names[k]} MEA" for k in nearest],
    "AREANAME": [f"{city_names[k]} area town {i + 1}" for i, k in enumerate(nearest)],
    "AREATYPE": np.where(dcity < 22_000, "URBAN", "RURAL"),
    "Shape__Area": [t.area for t in towns], "Shape__Length": [t.length for t in towns]}, geometry=towns, crs=crs)
tgdf.to_crs(4326).to_file("data/ShikokuMetropolitan.geojson", driver="GeoJSON")
minx, miny, maxx, maxy = island.bounds
cells = [c.intersection(island) for c in grid_cells(minx, miny, maxx, maxy, int((maxx - minx) // 4000), int((maxy - miny) // 4000))]
cells = [c for c in cells if c.area > 1e5]
cc = np.array([[c.centroid.x, c.centroid.y] for c in cells])
coast = shapely.distance(island.exterior, shapely.points(cc))
density = 25 + 900 * np.exp(-np.min([np.hypot(cc[:, 0] - x, cc[:, 1] - y) for x, y in cities.values()], axis=0) / 9000.0) \
          + 150 * np.exp(-coast / 5000.0)
pop = np.round(density * np.array([c.area for c in cells]) / 1e6 * rng(2).uniform(0.6, 1.4, len(cells))).astype(int)
gpd.GeoDataFrame({"OBJECTID": np.arange(1, len(cells) + 1), "ID": [f"M{k:05d}" for k in range(len(cells))], "D0001": pop,
                  "Shape__Area": [c.area for c in cells], "Shape__Length": [c.length for c in cells]},
                 geometry=cells, crs=crs).to_crs(4326).to_file("data/ShikokuPopulation.geojson", driver="GeoJSON")
ring = island.buffer(-3_000).exterior.simplify(2_000)
cross = [wiggly_line(cities["Matsuyama"], cities["Kochi"], rng(3), 14, 0.08),
         wiggly_line(cities["Takamatsu"], cities["Kochi"], rng(4), 14, 0.08),
         wiggly_line(cities["Tokushima"], (cx + 60_000, cy - 25_000), rng(5), 10, 0.08)]
roads = [LineString(ring.coords)] + cross
gpd.GeoDataFrame({"OBJECTID": np.arange(1, 5), "PrefectureNum": [37, 38, 37, 36], "EmergencyRoadCategory": [1, 1, 2, 2],
                  "Road": ["Coastal Route 11/55/56", "Route 33", "Route 32", "Route 195"], "ER_Road": ["ER1", "ER1", "ER2", "ER2"],
                  "Dependency": ["MLIT", "MLIT", "Prefecture", "Prefecture"], "LastUpdated": "2019-03-31",
                  "Shape__Length": [g.length for g in roads]}, geometry=roads, crs=crs).to_crs(4326).to_file("data/AllSeasonRoads.geojson", driver="GeoJSON")
