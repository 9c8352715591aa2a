# A campus drive network saved like osmnx.save_graph_geopackage: a street grid
# around the Natural History Building (WGS 84) with highway types, posted
# speeds on main streets, missing speeds elsewhere and some one-way streets.
import pyproj
r = rng()
lon0, lat0 = -88.2450, 40.0960
dlon, dlat = 0.00170, 0.00118                       # ~145 m × 131 m blocks
nx_, ny_ = 24, 21
nodes = []
for j in range(ny_):
    for i in range(nx_):
        jitter = r.normal(0, 0.00006, 2)
        nodes.append({"osmid": 37_000_000 + j * 100 + i, "x": round(lon0 + i * dlon + jitter[0], 7), "y": round(lat0 + j * dlat + jitter[1], 7)})
nid = lambda i, j: 37_000_000 + j * 100 + i
pos = {n["osmid"]: (n["x"], n["y"]) for n in nodes}
ew = {3: ("Springfield Avenue", "secondary", "30 mph"), 8: ("Green Street", "primary", "25 mph"), 12: ("University Avenue", "primary", "35 mph"),
      16: ("Main Street", "tertiary", None), 0: ("Windsor Road", "secondary", "40 mph")}
ns = {4: ("Neil Street", "primary", "30 mph"), 11: ("Goodwin Avenue", "tertiary", None), 14: ("Lincoln Avenue", "secondary", "30 mph"),
      20: ("Vine Street", "secondary", "35 mph"), 7: ("Wright Street", "residential", None)}
oneway_ew = {5, 10}; oneway_ns = {9, 17}
geod = pyproj.Geod(ellps="WGS84")
edges = []
def add(a, b, name, hw, speed, oneway):
    (x1, y1), (x2, y2) = pos[a], pos[b]
    length = round(geod.inv(x1, y1, x2, y2)[2], 3)
    for u, v in ([(a, b)] if oneway else [(a, b), (b, a)]):
        ms = speed if speed is not None else ("25 mph" if hw == "residential" and r.uniform() < 0.15 else None)
        edges.append({"u": u, "v": v, "key": 0, "osmid": 600_000_000 + len(edges), "highway": hw, "maxspeed": ms,
                      "oneway": oneway, "name": name, "length": length, "geometry": LineString([pos[u], pos[v]])})
for j in range(ny_):
    for i in range(nx_):
        if i + 1 < nx_ and not (j not in ew and r.uniform() < 0.06):
            name, hw, sp = ew.get(j, (f"W {['Oregon', 'Nevada', 'Iowa', 'Ohio', 'Illinois', 'Clark', 'Stoughton', 'Healey', 'White', 'Daniel', 'Chalmers', 'John', 'Armory', 'Gregory', 'Pennsylvania', 'Washington'][j % 16]} Street", "residential", None))
            a, b = (nid(i, j), nid(i + 1, j)) if j % 2 == 0 else (nid(i + 1, j), nid(i, j))
            add(a, b, name, hw, sp, j in oneway_ew)
        if j + 1 < ny_ and not (i not in ns and r.uniform() < 0.06):
            name, hw, sp = ns.get(i, (f"S {['First', 'Second', 'Third', 'Fourth', 'Fifth', 'Sixth', 'Locust', 'Busey', 'Coler', 'Orchard', 'Mathews', 'Harvey', 'Gregory'][i % 13]} Street", "residential", None))
            a, b = (nid(i, j), nid(i, j + 1)) if i % 2 == 0 else (nid(i, j + 1), nid(i, j))
            add(a, b, name, hw, sp, i in oneway_ns)
ndf = gpd.GeoDataFrame(nodes, geometry=gpd.points_from_xy([n["x"] for n in nodes], [n["y"] for n in nodes]), crs=4326)
ndf["street_count"] = 4
ndf.to_file("data/uiuc_drive.gpkg", layer="nodes", driver="GPKG")
gpd.GeoDataFrame(edges, crs=4326).to_file("data/uiuc_drive.gpkg", layer="edges", driver="GPKG")
