streets = gpd.read_file("data/streets.geojson")
streets["length_m"] = streets.length
total_km = round(float(streets["length_m"].sum() / 1000), 3)
# %%
G = nx.Graph()
for s in streets.itertuples():
    G.add_edge(s.from_node, s.to_node, length=s.length_m, minutes=s.length_m / (s.speed_kmh * 1000 / 60))
graph_size = [G.number_of_nodes(), G.number_of_edges()]
# %%
cc = nx.closeness_centrality(G, distance="length")
central_node = max(sorted(cc), key=cc.get)
# %%
within = nx.single_source_dijkstra_path_length(G, central_node, cutoff=2, weight="minutes")
n_within_2 = len(within)
# %%
times = nx.single_source_dijkstra_path_length(G, central_node, weight="minutes")
mean_minutes = round(float(sum(t for n, t in times.items() if n != central_node) / (len(times) - 1)), 3)
# %%
from collections import Counter
degree_counts = {str(k): v for k, v in sorted(Counter(d for _, d in G.degree()).items())}
# %%
diameter_m = round(float(max(max(d.values()) for _, d in nx.all_pairs_dijkstra_path_length(G, weight="length"))), 1)
# %%
eb = nx.edge_betweenness_centrality(G, weight="length")
worst = max(sorted(eb), key=eb.get)
H = G.copy()
H.remove_edge(*worst)
detour_min = round(float(nx.dijkstra_path_length(H, "N00", "N77", weight="minutes") - nx.dijkstra_path_length(G, "N00", "N77", weight="minutes")), 3)
# %%
n_bridge_edges = sum(1 for _ in nx.bridges(G))
# %%
mean_path_m = round(float(nx.average_shortest_path_length(G, weight="length")), 1)
# %%
fast = nx.dijkstra_path(G, "N00", "N77", weight="minutes")
km = sum(G[a][b]["length"] for a, b in zip(fast, fast[1:])) / 1000
minutes = sum(G[a][b]["minutes"] for a, b in zip(fast, fast[1:]))
route_speed = round(float(km / (minutes / 60)), 3)
