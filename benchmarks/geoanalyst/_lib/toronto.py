# Etobicoke (Toronto): neighbourhood polygons and fire stations, stored in WGS 84.
def make_fire_data():
    r = rng()
    cx, cy = 615_000.0, 4_840_000.0  # UTM 17N
    area = organic_polygon(cx, cy, 9_000, r, 0.2)
    hoods = gpd.GeoDataFrame(geometry=voronoi_cells(area, 24, r), crs=32617)
    hoods["OBJECTID_1"] = np.arange(1, len(hoods) + 1)
    hoods["LCODE_NAME"] = [f"ETOBICOKE-{i:02d}" for i in range(len(hoods))]
    hoods["SECTION"] = r.choice(["North", "Central", "South"], len(hoods))
    hoods["DISTRICT"] = "Etobicoke"; hoods["DIVISION"] = r.choice(["D1", "D2"], len(hoods))
    hoods["OBJECTID"] = hoods.OBJECTID_1 + 1000
    hoods["Shape_Length"] = hoods.geometry.length.round(2); hoods["Shape_Area"] = hoods.geometry.area.round(2)
    hoods.to_crs(4326).to_file("data/etobicoke.geojson", driver="GeoJSON")
    st = points_in(area.buffer(-1500), 7, r) + points_in(area.buffer(3000).difference(area), 3, rng(1))
    fs = gpd.GeoDataFrame({"OBJECTID_1": np.arange(1, 11), "NAME": [f"FIRE STATION {400 + i}" for i in range(10)],
                           "ADDRESS": [f"{100 + 7 * i} Islington Ave" for i in range(10)],
                           "WARD_NAME": r.choice(["Etobicoke North", "Etobicoke Centre", "Etobicoke-Lakeshore"], 10),
                           "MUN_NAME": "Etobicoke"}, geometry=st, crs=32617)
    fs.to_crs(4326).to_file("data/fire_stations.geojson", driver="GeoJSON")
