import matplotlib.pyplot as plt
from rasterio.features import rasterize
from sklearn.ensemble import RandomForestClassifier
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import train_test_split
names = ["tasgrav_IR", "tasgrav_IR_1VD", "tasmag_TMI", "tasmag_TMI_1VD", "tasrad_K_pct", "tasrad_Th_ppm", "tasrad_U_ppm"]
stack = []
for name in names:
    with rasterio.open(f"data/{name}.tif") as src:
        band = src.read(1).astype("float64")
        band[band == src.nodata] = np.nan
        stack.append(band)
        transform, crs, bounds = src.transform, src.crs, src.bounds
stack = np.stack(stack)
land = ~np.isnan(stack).any(axis=0)
occ = gpd.read_file("data/sn_w_minoccs.gpkg")
print(stack.shape, land.sum(), len(occ))
# %%
labels = rasterize([(g, 1) for g in occ.buffer(1000)], out_shape=land.shape, transform=transform, fill=0).astype(bool)
X_all = stack[:, land].T
y_all = labels[land].astype(int)
rng_ = np.random.default_rng(42)
pos = np.flatnonzero(y_all == 1)
neg = rng_.choice(np.flatnonzero(y_all == 0), size=len(pos), replace=False)
keep = np.concatenate([pos, neg])
X_train, X_test, y_train, y_test = train_test_split(X_all[keep], y_all[keep], test_size=0.3, random_state=42, stratify=y_all[keep])
model = RandomForestClassifier(n_estimators=200, random_state=42).fit(X_train, y_train)
auc = roc_auc_score(y_test, model.predict_proba(X_test)[:, 1])
pd.DataFrame({"metric": ["roc_auc"], "value": [auc]}).to_csv("pred_results/prospectivity_auc.csv", index=False)
print("positives", len(pos), "AUC", round(auc, 3))
# %%
proba = np.full(land.shape, np.nan)
proba[land] = model.predict_proba(X_all)[:, 1]
fig, ax = plt.subplots(figsize=(7, 8))
im = ax.imshow(proba, cmap="magma", extent=(bounds.left, bounds.right, bounds.bottom, bounds.top), vmin=0, vmax=1)
occ.plot(ax=ax, color="cyan", markersize=8, label="Sn-W occurrences")
fig.colorbar(im, ax=ax, label="probability of a tin-tungsten deposit")
ax.set_title("Tin-tungsten prospectivity (random forest)")
ax.legend(loc="lower left")
fig.savefig("pred_results/mineral_prospectivity.png", dpi=110, bbox_inches="tight")
