tracts = gpd.read_file("data/tracts.shp")
tracts["GEOID"] = tracts["GEOID"].astype(str)
table = pd.read_csv("data/tract_population.csv", dtype={"GEOID": str})
sizes = [len(tracts), len(table)]
# %%
joined = tracts.merge(table, on="GEOID", how="left")
joined["sq_mi"] = joined.area / 5280 ** 2
joined["density"] = joined["total_pop"] / joined["sq_mi"]
total_sq_mi = round(float(joined["sq_mi"].sum()), 3)
# %%
weighted_income = round(float((joined["median_income"] * joined["total_pop"]).sum() / joined["total_pop"].sum()))
# %%
from libpysal import weights
w = weights.Queen.from_dataframe(joined, use_index=False)
mean_neighbours = round(float(w.mean_neighbors), 3)
# %%
import esda
w.transform = "r"
density_moran = round(float(esda.Moran(joined["density"].to_numpy(), w, permutations=0).I), 4)
# %%
joined["income_q"] = pd.qcut(joined["median_income"], 4, labels=[1, 2, 3, 4])
pop_by_quartile = {str(k): int(v) for k, v in joined.groupby("income_q", observed=True)["total_pop"].sum().items()}
# %%
g = joined.groupby("borough")[["total_pop", "sq_mi"]].sum()
borough_density = {k: round(float(r.total_pop / r.sq_mi), 1) for k, r in g.iterrows()}
# %%
centre = joined.union_all().centroid
outermost = str(joined["GEOID"].iloc[int(joined.centroid.distance(centre).argmax())])
# %%
most_connected = min(joined["GEOID"].iloc[i] for i in range(len(joined)) if w.cardinalities[i] == max(w.cardinalities.values()))
# %%
income_density_corr = round(float(joined["median_income"].corr(joined["density"])), 4)
# %%
borough_sq_mi = {k: round(float(v), 3) for k, v in joined.groupby("borough")["sq_mi"].sum().items()}
