import json, re
import matplotlib.pyplot as plt
text = open("data/data20000.txt").read()
vocab = {m.group(1).lower(): float(m.group(2)) for m in re.finditer(r"'([^']+)'\s*:\s*(-?[0-9.]+)", text)}
tweets = json.load(open("data/12500-tweets-2021-09-24_01-48-23.json"))
rows = []
for tw in tweets:
    words = re.findall(r"[a-z]+", tw["text"].lower())
    hits = [vocab[w] for w in words if w in vocab]
    if not hits:
        continue
    score = sum(hits)
    if tw.get("coordinates"):
        lon, lat = tw["coordinates"]["coordinates"]
    elif tw.get("place") and tw["place"].get("bounding_box"):
        ring = np.array(tw["place"]["bounding_box"]["coordinates"][0])
        lon, lat = ring[:, 0].mean(), ring[:, 1].mean()
    else:
        continue
    rows.append((score, lon, lat))
print(len(vocab), "terms;", len(rows), "located weather tweets")
# %%
counties = gpd.read_file("data/cb_2020_us_county_20m.shp")
pts = gpd.GeoDataFrame({"score": [s for s, _, _ in rows]}, geometry=gpd.points_from_xy([x for _, x, _ in rows], [y for _, _, y in rows]), crs=4326).to_crs(counties.crs)
joined = gpd.sjoin(pts, counties[["GEOID", "NAME", "geometry"]], predicate="within")
per = joined.groupby(["GEOID", "NAME"]).agg(tweets=("score", "size"), heat_exposure=("score", "mean")).reset_index()
per["heat_norm"] = (per["heat_exposure"] - per["heat_exposure"].min()) / (per["heat_exposure"].max() - per["heat_exposure"].min())
per.to_csv("pred_results/US_heat_exposure.csv", index=False)
print(per.describe())
# %%
def jenks(values, k):
    v = np.sort(np.asarray(values, dtype=float)); n = len(v)
    cost = np.full((k + 1, n + 1), np.inf); cost[0, 0] = 0; split = np.zeros((k + 1, n + 1), dtype=int)
    s1 = np.concatenate([[0], np.cumsum(v)]); s2 = np.concatenate([[0], np.cumsum(v * v)])
    ssd = lambda i, j: s2[j] - s2[i] - (s1[j] - s1[i]) ** 2 / (j - i)
    for c in range(1, k + 1):
        for j in range(c, n + 1):
            cands = [cost[c - 1, i] + ssd(i, j) for i in range(c - 1, j)]
            best = int(np.argmin(cands)); cost[c, j] = cands[best]; split[c, j] = best + c - 1
    bounds, j = [], n
    for c in range(k, 0, -1):
        bounds.append(v[j - 1]); j = split[c, j]
    return sorted(bounds)
breaks = jenks(per["heat_norm"], 5)
per["class"] = np.searchsorted(breaks, per["heat_norm"], side="left")
mapped = counties.merge(per, on=["GEOID", "NAME"], how="left")
fig, ax = plt.subplots(figsize=(13, 7))
mapped.plot(ax=ax, color="lightgrey", edgecolor="white", linewidth=0.3)
cmap = plt.get_cmap("YlOrRd", 5)
labels = [f"{lo:.2f} – {hi:.2f}" for lo, hi in zip([0] + breaks[:-1], breaks)]
for c in range(5):
    part = mapped[mapped["class"] == c]
    part.plot(ax=ax, color=cmap(c), edgecolor="white", linewidth=0.3)
ax.legend([plt.Rectangle((0, 0), 1, 1, color=cmap(c)) for c in range(5)], labels, title="heat exposure (normalised, Jenks)", loc="lower left")
ax.set_title("Heat exposure sentiment from tweets, 24 September 2021")
ax.set_axis_off()
fig.savefig("pred_results/US_heat_exposure_map.png", dpi=100, bbox_inches="tight")
print(breaks)
