import esda
import libpysal
import matplotlib.pyplot as plt
crashes = gpd.read_file("data/crashes.shp")
roads = gpd.read_file("data/roads.shp")
peak = crashes[crashes["CRASH_DOW"].isin(["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]) & crashes["CRASH_HOD"].between(15, 17)].copy()
snapped = gpd.sjoin_nearest(peak, roads[["ROAD_ID", "geometry"]], max_distance=1320, how="inner")
snapped = snapped[~snapped.index.duplicated()]
print(len(crashes), "crashes;", len(peak), "at peak;", len(snapped), "snapped")
# %%
counts = snapped.groupby("ROAD_ID").size()
roads["crashes"] = roads["ROAD_ID"].map(counts).fillna(0).astype(int)
roads["CrashRate"] = roads["crashes"] / (roads.length / 5280)
ends = {}
for idx, g in zip(roads.index, roads.geometry):
    for c in (g.coords[0], g.coords[-1]):
        ends.setdefault((round(c[0], 3), round(c[1], 3)), set()).add(idx)
neighbours = {idx: set() for idx in roads.index}
for members in ends.values():
    for a in members:
        neighbours[a] |= members - {a}
w = libpysal.weights.W({k: sorted(v) for k, v in neighbours.items()}, silence_warnings=True)
print(w.n, "segments, mean neighbours", round(w.mean_neighbors, 2))
# %%
g = esda.G_Local(roads["CrashRate"].to_numpy(dtype=float), w, star=True, transform="B", permutations=999, seed=46)
roads["GiZScore"] = g.Zs
roads["GiPValue"] = g.p_sim
roads["label"] = np.where((g.p_sim < 0.05) & (g.Zs > 0), "hot spot", np.where((g.p_sim < 0.05) & (g.Zs < 0), "cold spot", "not significant"))
roads.to_file("pred_results/crash_hotspots.geojson", driver="GeoJSON")
print(roads["label"].value_counts())
# %%
colours = {"hot spot": "red", "cold spot": "blue", "not significant": "lightgrey"}
fig, ax = plt.subplots(figsize=(7, 11))
for label, part in roads.groupby("label"):
    part.plot(ax=ax, color=colours[label], linewidth=3 if label != "not significant" else 1, label=label)
ax.legend(loc="lower right"); ax.set_title("Peak-hour crash hot spots (Gi*, network weights)")
ax.set_axis_off()
fig.savefig("pred_results/crash_hotspots.png", dpi=100, bbox_inches="tight")
