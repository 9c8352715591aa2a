tracts = gpd.read_file("data/tracts.shp")
tracts["GEOID"] = tracts["GEOID"].astype(str)
table = pd.read_csv("data/tract_population.csv", dtype={"GEOID": str})
# %%
joined = tracts.merge(table, on="GEOID", how="left")
# %%
joined["density"] = joined["total_pop"] / (joined.area / 5280 ** 2)
median_density = joined["density"].median()
# %%
joined["density_class"] = pd.qcut(joined["density"], 5, labels=[1, 2, 3, 4, 5])
class_counts = {str(k): int(v) for k, v in joined["density_class"].value_counts().items()}
# %%
top3 = joined.sort_values("density", ascending=False)["GEOID"].head(3).tolist()
# %%
borough_income = {b: round(float((g["median_income"] * g["total_pop"]).sum() / g["total_pop"].sum())) for b, g in joined.groupby("borough")}
# %%
missing_pop = int(joined["total_pop"].isna().sum())
# %%
boroughs = joined.dissolve(by="borough", aggfunc={"total_pop": "sum"})
borough_pop = {str(k): int(v) for k, v in boroughs["total_pop"].items()}
