import networkx as nx
import matplotlib.pyplot as plt
hoods = gpd.read_file("data/Neighborhoods.shp")
streets = gpd.read_file("data/Streets.shp")
zoning = gpd.read_file("data/Zoning.shp")
office = zoning[zoning["ZONELUT_DE"].isin(["Downtown Office Core 1", "Downtown Office Core 2"])]
targets = hoods[hoods["L_HOOD"].isin(["CAPITOL HILL", "CENTRAL AREA"])].set_index("L_HOOD")
capitol = targets.loc["CAPITOL HILL", "geometry"]
trails = streets[(streets["SEGMENT_TY"] == 8)]
trail_miles = trails.intersection(capitol).length.sum() / 5280
print(len(office), "office-core zones; trail miles in Capitol Hill:", round(trail_miles, 2))
# %%
arterials = streets[(streets["SEGMENT_TY"] == 1) & (streets["ARTERIAL_C"] == 1)].copy()
arterials["cost"] = arterials.length * (1 + arterials["SLOPE_PCT"] / 4)
G = nx.Graph()
for geom, cost in zip(arterials.geometry, arterials["cost"]):
    a, b = geom.coords[0], geom.coords[-1]
    G.add_edge(a, b, cost=cost, geometry=geom)
nodes = np.array(list(G.nodes))
def nearest_node(pt):
    return tuple(nodes[np.argmin(np.hypot(nodes[:, 0] - pt.x, nodes[:, 1] - pt.y))])
start = nearest_node(office.union_all().centroid)
print(G.number_of_nodes(), "intersections,", G.number_of_edges(), "arterial segments")
# %%
routes, summary = [], {"trail_miles_capitol_hill": trail_miles}
for name, hood in targets.iterrows():
    path = nx.shortest_path(G, start, nearest_node(hood.geometry.centroid), weight="cost")
    line = shapely.line_merge(shapely.MultiLineString([G.edges[a, b]["geometry"] for a, b in zip(path[:-1], path[1:])]))
    coverage = hood.geometry.intersection(line.buffer(2640)).area / hood.geometry.area * 100
    key = name.lower().replace(" ", "_")
    summary[f"route_miles_{key}"] = line.length / 5280
    summary[f"coverage_pct_{key}"] = coverage
    routes.append({"destination": name, "length_mi": line.length / 5280, "coverage_pct": coverage, "geometry": line})
routes = gpd.GeoDataFrame(routes, crs=streets.crs)
routes.to_file("pred_results/bike_routes.geojson", driver="GeoJSON")
pd.DataFrame({"metric": list(summary), "value": list(summary.values())}).to_csv("pred_results/bike_route_summary.csv", index=False)
print(pd.Series(summary).round(2))
# %%
fig, ax = plt.subplots(figsize=(10, 10))
hoods.plot(ax=ax, color="whitesmoke", edgecolor="grey")
targets.plot(ax=ax, color="lightyellow", edgecolor="grey")
office.plot(ax=ax, color="orange", alpha=0.6)
streets[streets["SEGMENT_TY"] == 1].plot(ax=ax, color="lightgrey", linewidth=0.4)
arterials.plot(ax=ax, color="grey", linewidth=1)
trails.plot(ax=ax, color="green", linewidth=1.5)
gpd.GeoSeries(routes.buffer(2640), crs=streets.crs).plot(ax=ax, color="royalblue", alpha=0.15)
routes.plot(ax=ax, column="destination", cmap="Set1", linewidth=3, legend=True)
for name, hood in hoods.set_index("L_HOOD").iterrows():
    ax.annotate(name, hood.geometry.representative_point().coords[0], fontsize=8, ha="center")
ax.set_title("Proposed bike routes from the Downtown Office Core (half-mile coverage shaded)")
ax.set_axis_off()
fig.savefig("pred_results/bike_routes.png", dpi=100, bbox_inches="tight")
