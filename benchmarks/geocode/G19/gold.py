counties = gpd.read_file("data/counties.gpkg", layer="counties")
# %%
from libpysal import weights
w = weights.Queen.from_dataframe(counties, use_index=False)
mean_neighbours = round(float(w.mean_neighbors), 3)
# %%
n_islands = len(w.islands)
# %%
w.transform = "r"
counties["rate_lag"] = weights.lag_spatial(w, counties["rate"].to_numpy())
lag_corr = round(float(np.corrcoef(counties["rate"], counties["rate_lag"])[0, 1]), 4)
# %%
counties["high"] = counties["rate"] > counties["rate"].quantile(0.8)
n_high = int(counties["high"].sum())
# %%
regions = counties[counties["high"]].dissolve().explode(index_parts=False).reset_index(drop=True)[["geometry"]]
n_regions = len(regions)
# %%
largest = regions.geometry.iloc[int(regions.area.argmax())]
high = counties[counties["high"]]
largest_region_pop = int(high.loc[high.representative_point().within(largest), "pop"].sum())
# %%
high_pop_share = round(float(counties.loc[counties["high"], "pop"].sum() / counties["pop"].sum() * 100), 2)
# %%
high_ids = set(np.flatnonzero(counties["high"].to_numpy()))
border_low = int(sum(1 for i in range(len(counties)) if i not in high_ids and any(j in high_ids for j in w.neighbors[i])))
# %%
mean_rate_high = round(float(counties.loc[counties["high"], "rate"].mean()), 3)
# %%
pop_weighted_rate = round(float((counties["rate"] * counties["pop"]).sum() / counties["pop"].sum()), 3)
