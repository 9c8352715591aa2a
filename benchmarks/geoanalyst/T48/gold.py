import esda
import libpysal
from mgwr.gwr import GWR
import matplotlib.pyplot as plt
loans = gpd.read_file("data/loan_data.shp")
selected = loans[loans["AcceptedLo"] >= 30].copy().reset_index(drop=True)
print(len(loans), "tracts;", len(selected), "with at least 30 loans")
# %%
coords = np.c_[selected.centroid.x, selected.centroid.y]
band = libpysal.weights.min_threshold_distance(coords)
w = libpysal.weights.DistanceBand(coords, threshold=band * 1.0001, binary=True, silence_warnings=True)
g = esda.G_Local(selected["AveInteres"].to_numpy(dtype=float), w, star=True, transform="R", permutations=999, seed=48)
cut = esda.fdr(g.p_sim, 0.05)
hot = selected.copy()
hot["GiZScore"] = g.Zs; hot["GiPValue"] = g.p_sim
hot["label"] = np.where((g.p_sim <= cut) & (g.Zs > 0), "hot spot", np.where((g.p_sim <= cut) & (g.Zs < 0), "cold spot", "not significant"))
hot.to_file("pred_results/hot_spots_result.geojson", driver="GeoJSON")
print("band", round(band), "m; FDR cut-off", cut, hot["label"].value_counts().to_dict())
# %%
y = selected["AveInteres"].to_numpy().reshape(-1, 1)
X = selected[["AveLoanGra"]].to_numpy()
res = GWR(coords, y, X, bw=22, kernel="bisquare", fixed=False).fit()
gwr = selected.copy()
gwr["intercept"] = res.params[:, 0]; gwr["grade_coef"] = res.params[:, 1]
gwr["local_R2"] = res.localR2.ravel(); gwr["predicted"] = res.predy.ravel(); gwr["residual"] = res.resid_response.ravel()
gwr.to_file("pred_results/gwr_result.geojson", driver="GeoJSON")
print(gwr[["intercept", "grade_coef", "local_R2"]].describe().round(3))
# %%
fig, (a1, a2) = plt.subplots(1, 2, figsize=(13, 9))
colours = {"hot spot": "red", "cold spot": "blue", "not significant": "lightgrey"}
loans.plot(ax=a1, color="white", edgecolor="gainsboro", linewidth=0.2)
for label, part in hot.groupby("label"):
    part.plot(ax=a1, color=colours[label], edgecolor="white", linewidth=0.2)
a1.legend([plt.Rectangle((0, 0), 1, 1, color=v) for v in colours.values()], list(colours), loc="lower left")
a1.set_title("Interest-rate hot spots (Gi*, FDR)"); a1.set_axis_off()
loans.plot(ax=a2, color="white", edgecolor="gainsboro", linewidth=0.2)
gwr.plot(ax=a2, column="intercept", cmap="coolwarm", legend=True, legend_kwds={"label": "local intercept (% points)", "shrink": 0.6})
a2.set_title("GWR local intercept (rate net of loan grade)"); a2.set_axis_off()
fig.savefig("pred_results/interest_rates.png", dpi=100, bbox_inches="tight")
