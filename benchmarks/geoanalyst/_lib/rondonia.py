# Rondônia: roads (official / unofficial), the deforested area (one multipolygon), protected
# forests, a planned road and the state boundary, in SIRGAS 2000 / Brazil Polyconic (EPSG:5880).
def make_rondonia_data():
    r = rng()
    cx, cy = 4_900_000.0, 8_800_000.0
    state = organic_polygon(cx, cy, 120_000, r, 0.2)
    roads = [wiggly_line((cx - 110_000, cy - 60_000), (cx + 100_000, cy + 70_000), r, 20, 0.08)]
    for k in range(14):
        p0 = roads[0].interpolate(r.uniform(0.05, 0.95), normalized=True)
        ang = r.uniform(0, 2 * np.pi); L = r.uniform(20_000, 60_000)
        roads.append(wiggly_line((p0.x, p0.y), (p0.x + L * np.cos(ang), p0.y + L * np.sin(ang)), rng(10 + k), 10, 0.1))
    roads = [l.intersection(state) for l in roads]
    rd = gpd.GeoDataFrame({"OBJECTID": np.arange(1, len(roads) + 1), "Name": [f"RO-{100 + i}" for i in range(len(roads))],
                           "Status": ["Official"] + list(r.choice(["Official", "Unofficial"], len(roads) - 1))},
                          geometry=roads, crs=5880)
    rd = rd[~rd.geometry.is_empty]
    rd["Shape_Length"] = rd.geometry.length.round(2)
    rd.to_file("data/roads.geojson", driver="GeoJSON")
    near = rd.buffer(8_000).union_all()
    patches = [p.buffer(r.uniform(2_000, 6_000)) for p in points_in(near.intersection(state), 90, rng(2))]
    far = [p.buffer(r.uniform(1_000, 4_000)) for p in points_in(state, 12, rng(3))]
    defo = shapely.union_all(patches + far).intersection(state)
    gpd.GeoDataFrame({"OBJECTID": [1], "Shape_Length": [round(defo.length, 2)], "Shape_Area": [round(defo.area, 2)]},
                     geometry=[defo], crs=5880).to_file("data/deforestedArea.geojson", driver="GeoJSON")
    prot = [organic_polygon(p.x, p.y, r.uniform(12_000, 25_000), rng(20 + i), 0.3).intersection(state)
            for i, p in enumerate(points_in(state.buffer(-30_000), 5, rng(4)))]
    pf = gpd.GeoDataFrame({"OBJECTID_1": np.arange(1, 6), "Name": [f"Reserva {n}" for n in "ABCDE"],
                           "Category": r.choice(["Indigenous Land", "State Park", "Extractive Reserve"], 5),
                           "Jurisdiction": "State", "Created": r.integers(1985, 2010, 5)}, geometry=prot, crs=5880)
    pf["Shape_Length"] = pf.geometry.length.round(2); pf["Shape_Area"] = pf.geometry.area.round(2)
    pf.to_file("data/protectedForest.geojson", driver="GeoJSON")
    planned = wiggly_line((cx - 40_000, cy + 90_000), (cx + 30_000, cy - 80_000), rng(5), 16, 0.1).intersection(state)
    gpd.GeoDataFrame({"OBJECTID": [1], "Name": ["Proposed road"], "Status": ["Planned"], "Shape_Length": [round(planned.length, 2)]},
                     geometry=[planned], crs=5880).to_file("data/planned_road.geojson", driver="GeoJSON")
    gpd.GeoDataFrame({"NAME": ["Rondônia"]}, geometry=[state], crs=5880).to_file("data/boundary.geojson", driver="GeoJSON")
