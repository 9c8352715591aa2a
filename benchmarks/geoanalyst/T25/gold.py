from sklearn.cluster import KMeans
import matplotlib.pyplot as plt
hk = gpd.read_file("data/hkg_constituency.shp")
target = gpd.read_file("data/target_risk.shp").iloc[0]
def similarity_rank(fields):
    x = hk[fields].astype(float)
    mean, std = x.mean(), x.std(ddof=0)
    z = (x - mean) / std
    zt = (target[fields].astype(float) - mean) / std
    score = ((z - zt) ** 2).sum(axis=1)
    return score.rank(method="first").astype(int)
risks = {"trans_risk": ["PopDensity", "SpInterIdx"],
         "suscep_risk": ["PopDensity", "Seniors60t", "spending_c", "keyfacts_p"],
         "resource_risk": ["Seniors60t", "SUM_Beds"],
         "exposure_risk": ["RelativeCa"]}
for name, fields in risks.items():
    hk[name] = 432 - similarity_rank(fields)
print(hk[list(risks)].describe())
# %%
cols = list(risks)
x = hk[cols].astype(float)
z = (x - x.mean()) / x.std(ddof=0)
init = z[hk["SEEDS"] == 1].to_numpy()
km = KMeans(n_clusters=len(init), init=init, n_init=1, random_state=0).fit(z.to_numpy())
hk["cluster"] = km.labels_ + 1
hk.to_crs(4326).to_file("pred_results/hkg_risk_profiles.geojson", driver="GeoJSON")
print(hk.groupby("cluster")[cols].mean().round(0))
# %%
fig, (ax, bx) = plt.subplots(1, 2, figsize=(15, 7), gridspec_kw={"width_ratios": [3, 2]})
hk.plot(ax=ax, column="cluster", categorical=True, cmap="Set2", edgecolor="white", linewidth=0.3, legend=True,
        legend_kwds={"title": "risk profile", "loc": "lower left"})
ax.set_title("COVID-19 risk profiles (k-means on four risks)"); ax.set_axis_off()
hk.groupby("cluster")[cols].mean().plot.bar(ax=bx, colormap="viridis")
bx.set_ylabel("mean risk (431 = worst)"); bx.set_title("Profile means")
fig.tight_layout()
fig.savefig("pred_results/hkg_risk_profiles.png", dpi=100)
