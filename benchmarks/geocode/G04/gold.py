counties = gpd.read_file("data/counties.gpkg", layer="counties")
# %%
from libpysal import weights
w = weights.Queen.from_dataframe(counties, use_index=False)
w.transform = "r"
# %%
import esda
np.random.seed(12345)
mi = esda.Moran(counties["rate"], w, permutations=999)
moran_i, moran_p = mi.I, mi.p_sim
# %%
lisa = esda.Moran_Local(counties["rate"], w, permutations=999, seed=12345)
counties["cluster"] = "ns"
counties.loc[(lisa.q == 1) & (lisa.p_sim < 0.05), "cluster"] = "HH"
counties.loc[(lisa.q == 3) & (lisa.p_sim < 0.05), "cluster"] = "LL"
# %%
hh = counties[counties["cluster"] == "HH"]
hh_pop = hh["pop"].sum()
hh_rate = round(float((hh["rate"] * hh["pop"]).sum() / hh_pop), 2)
# %%
geary_c = round(float(esda.Geary(counties["rate"], w, permutations=0).C), 4)
# %%
ll = counties[counties["cluster"] == "LL"]
n_ll = len(ll)
ll_mean_rate = round(float(ll["rate"].mean()), 3) if n_ll else None
# %%
hh_area_km2 = round(float(hh.area.sum() / 1e6), 3)
# %%
n_significant = int((lisa.p_sim < 0.05).sum())
