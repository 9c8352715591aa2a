from mgwr.gwr import GWR
from mgwr.sel_bw import Sel_BW
import matplotlib.pyplot as plt
georgia = gpd.read_file("data/G_utm.shp")
y = georgia["PctBach"].to_numpy().reshape(-1, 1)
X = georgia[["PctFB", "PctBlack", "PctRural"]].to_numpy()
coords = list(zip(georgia["X"], georgia["Y"]))
print(georgia[["PctBach", "PctFB", "PctBlack", "PctRural"]].describe())
# %%
bw = Sel_BW(coords, y, X).search()
results = GWR(coords, y, X, bw).fit()
params = pd.DataFrame(results.params, columns=["intercept", "PctFB", "PctBlack", "PctRural"])
params.insert(0, "AreaKey", georgia["AreaKey"].to_numpy())
params["local_R2"] = results.localR2.ravel()
params["bandwidth"] = bw
params.to_csv("pred_results/GA_GWR_params.csv", index=False)
print("bandwidth", bw, "AICc", round(results.aicc, 2), "R2", round(results.R2, 3))
# %%
fig, axes = plt.subplots(2, 3, figsize=(12, 8))
coefs = {b: GWR(coords, y, X, b).fit().params[:, -1] for b in range(25, 175, 25)}
vmin = min(c.min() for c in coefs.values()); vmax = max(c.max() for c in coefs.values())
for ax, (b, c) in zip(axes.ravel(), coefs.items()):
    georgia.assign(rural=c).plot("rural", ax=ax, cmap="viridis", vmin=vmin, vmax=vmax, edgecolor="white", linewidth=0.2)
    ax.set_title(f"Bandwidth: {b}"); ax.set_axis_off()
sm = plt.cm.ScalarMappable(cmap="viridis", norm=plt.Normalize(vmin=vmin, vmax=vmax))
fig.colorbar(sm, ax=axes, shrink=0.6, label="local PctRural coefficient")
fig.suptitle("GWR coefficient of PctRural on PctBach by bandwidth")
fig.savefig("pred_results/GA_GWR.png", dpi=100, bbox_inches="tight")
