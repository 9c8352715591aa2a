import pyproj
airports = pd.read_csv("data/airports.csv")
legs = pd.read_csv("data/legs.csv")
geod = pyproj.Geod(ellps="WGS84")
sizes = [len(airports), len(legs)]
# %%
leg_counts = {a: int(((legs["origin"] == a) | (legs["dest"] == a)).sum()) for a in airports["iata"]}
# %%
pos = airports.set_index("iata")
net = nx.Graph()
net.add_nodes_from(airports["iata"])
for o, d in zip(legs["origin"], legs["dest"]):
    net.add_edge(o, d, km=geod.inv(pos.at[o, "lon"], pos.at[o, "lat"], pos.at[d, "lon"], pos.at[d, "lat"])[2] / 1000)
n_components = nx.number_connected_components(net)
# %%
route = nx.dijkstra_path(net, "LHR", "CDG", weight="km")
route_km = round(float(nx.dijkstra_path_length(net, "LHR", "CDG", weight="km")), 1)
# %%
az = {a: geod.inv(pos.at["LHR", "lon"], pos.at["LHR", "lat"], r.lon, r.lat)[0] for a, r in pos.iterrows() if a != "LHR"}
due_west = min(az, key=lambda a: abs(az[a] + 90))
# %%
long_legs = int(sum(1 for _, _, k in net.edges(data="km") if k > 9000))
# %%
lon, lat = pos.at["LHR", "lon"], pos.at["LHR", "lat"]
lhr_antipode = [round(float((lon + 360) % 360 - 180), 4), round(float(-lat), 4)]
# %%
from shapely.geometry import MultiPoint
hull = MultiPoint(list(zip(airports["lon"], airports["lat"]))).convex_hull
hull_area_km2 = round(abs(geod.geometry_area_perimeter(hull)[0]) / 1e6)
# %%
import itertools
farthest_pair = sorted(max(itertools.combinations(pos.index, 2), key=lambda p: geod.inv(pos.at[p[0], "lon"], pos.at[p[0], "lat"], pos.at[p[1], "lon"], pos.at[p[1], "lat"])[2]))
# %%
mean_leg_km = round(float(np.mean([k for _, _, k in net.edges(data="km")])), 1)
# %%
southern = sorted(airports.loc[airports["lat"] < 0, "iata"])
