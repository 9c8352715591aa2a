import esda
import libpysal
import matplotlib.pyplot as plt
from matplotlib.colors import ListedColormap
hoods = gpd.read_file("data/berlin-neighbourhoods.geojson")
df = pd.read_csv("data/berlin-listings.csv")
listings = gpd.GeoDataFrame(df, geometry=gpd.points_from_xy(df["longitude"], df["latitude"]), crs=4326)
joined = gpd.sjoin(listings, hoods, predicate="within")
median = joined.groupby("neighbourhood_group")["price"].median().rename("median_price")
hoods = hoods.join(median, on="neighbourhood_group")
hoods["median_price"] = hoods["median_price"].fillna(hoods["median_price"].mean())
print(median)
# %%
w = libpysal.weights.Queen.from_dataframe(hoods, use_index=False)
w.transform = "r"
lisa = esda.Moran_Local(hoods["median_price"], w, permutations=999, seed=42)
names = {0: "not significant", 1: "hot spot", 2: "doughnut", 3: "cold spot", 4: "diamond"}
hoods["cluster"] = [names[q if p < 0.05 else 0] for q, p in zip(lisa.q, lisa.p_sim)]
hoods[["neighbourhood", "neighbourhood_group", "median_price", "cluster"]].to_csv("pred_results/moran_local.csv", index=False)
print(hoods["cluster"].value_counts())
# %%
colours = {"not significant": "lightgrey", "hot spot": "red", "doughnut": "lightblue", "cold spot": "blue", "diamond": "pink"}
fig, ax = plt.subplots(figsize=(9, 9))
for label, part in hoods.groupby("cluster"):
    part.plot(ax=ax, color=colours[label], edgecolor="white", linewidth=0.3, label=label)
handles = [plt.Rectangle((0, 0), 1, 1, color=colours[k]) for k in colours if k in set(hoods["cluster"])]
ax.legend(handles, [k for k in colours if k in set(hoods["cluster"])], loc="lower left")
ax.set_title("Local Moran's I of median Airbnb prices by neighbourhood group")
ax.set_axis_off()
fig.savefig("pred_results/moran_local.png", dpi=110, bbox_inches="tight")
