streets = gpd.read_file("data/streets.geojson")
streets["length_m"] = streets.length
# %%
G = nx.Graph()
for s in streets.itertuples():
    G.add_edge(s.from_node, s.to_node, length=s.length_m, minutes=s.length_m / (s.speed_kmh * 1000 / 60))
# %%
route = nx.dijkstra_path(G, "N00", "N77", weight="length")
route_m = nx.dijkstra_path_length(G, "N00", "N77", weight="length")
# %%
fastest_min = nx.dijkstra_path_length(G, "N00", "N77", weight="minutes")
# %%
reachable = set(nx.single_source_dijkstra_path_length(G, "N33", cutoff=1000, weight="length"))
# %%
bc = nx.betweenness_centrality(G, weight="length", normalized=True)
hub = max(bc, key=bc.get)
# %%
n_components = nx.number_connected_components(G)
dead_ends = sorted(n for n, d in G.degree() if d == 1)
# %%
mst_m = round(float(nx.minimum_spanning_tree(G, weight="length").size(weight="length")), 1)
# %%
route_streets = len(route) - 1
# %%
avg_speed = round(float((streets["speed_kmh"] * streets["length_m"]).sum() / streets["length_m"].sum()), 3)
