import networkx as nx
import matplotlib.pyplot as plt
nodes = gpd.read_file("data/uiuc_drive.gpkg", layer="nodes")
edges = gpd.read_file("data/uiuc_drive.gpkg", layer="edges")
def kmh(v):
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return np.nan
    num = float(str(v).split()[0])
    return num * 1.609344 if "mph" in str(v) else num
edges["speed_kph"] = edges["maxspeed"].map(kmh)
by_type = edges.groupby("highway")["speed_kph"].mean()
edges["speed_kph"] = edges["speed_kph"].fillna(edges["highway"].map(by_type)).fillna(edges["speed_kph"].mean())
edges["travel_time"] = edges["length"] / (edges["speed_kph"] / 3.6)
print(by_type.round(1).to_dict(), len(nodes), "nodes", len(edges), "edges")
# %%
G = nx.MultiDiGraph()
G.add_nodes_from(nodes["osmid"])
for u, v, k, t in zip(edges["u"], edges["v"], edges["key"], edges["travel_time"]):
    G.add_edge(u, v, key=k, travel_time=t)
proj = nodes.to_crs(32616)
building = gpd.GeoSeries(gpd.points_from_xy([-88.22625178710955], [40.109442588847976]), crs=4326).to_crs(32616).iloc[0]
start = nodes["osmid"].iloc[int(np.argmin(proj.distance(building)))]
times = nx.single_source_dijkstra_path_length(G, start, weight="travel_time")
nodes["travel_time_s"] = nodes["osmid"].map(times)
nodes[["osmid", "x", "y", "travel_time_s"]].to_csv("pred_results/node_travel_times.csv", index=False)
print(start, nodes["travel_time_s"].describe())
# %%
fig, ax = plt.subplots(figsize=(10, 9))
edges.plot(ax=ax, color="lightgrey", linewidth=0.8)
sc = ax.scatter(nodes["x"], nodes["y"], c=nodes["travel_time_s"], cmap="RdYlBu", s=18, zorder=2)
s = nodes[nodes["osmid"] == start]
ax.scatter(s["x"], s["y"], color="black", marker="*", s=250, zorder=3, label="Natural History Building")
fig.colorbar(sc, ax=ax, shrink=0.7, label="driving time (s)")
ax.legend(loc="lower left"); ax.set_title("Driving time from the Natural History Building")
ax.set_axis_off()
fig.savefig("pred_results/travel_time.png", dpi=100, bbox_inches="tight")
