import matplotlib.pyplot as plt
from matplotlib.colors import TwoSlopeNorm
table = pd.read_excel("data/homeless_data.xlsx")
states = gpd.read_file("data/USA_States.shp")
table["State"] = table["State"].str.strip().str.upper()
joined = states.merge(table, left_on="STATE_ABBR", right_on="State", how="left")
print("unmatched states:", joined["Homeless13"].isna().sum(), "; table rows without polygon:", sorted(set(table["State"]) - set(states["STATE_ABBR"])))
joined["HomelessPopPer10k"] = joined["Homeless13"] / joined["Pop13"] * 10_000
joined.to_file("pred_results/homeless_by_state.geojson", driver="GeoJSON")
# %%
fig, ax = plt.subplots(figsize=(12, 7))
joined.plot(ax=ax, column="HomelessPopPer10k", cmap="Reds", edgecolor="white", linewidth=0.5, legend=True,
            legend_kwds={"label": "homeless per 10,000 residents (2013)", "shrink": 0.6})
ax.set_title("Homelessness per 10,000 residents, 2013"); ax.set_axis_off()
fig.savefig("pred_results/homeless_per10k.png", dpi=100, bbox_inches="tight")
fig, ax = plt.subplots(figsize=(12, 7))
joined.plot(ax=ax, column="Change", cmap="RdBu_r", norm=TwoSlopeNorm(vcenter=0, vmin=joined["Change"].min(), vmax=joined["Change"].max()),
            edgecolor="white", linewidth=0.5, legend=True, legend_kwds={"label": "change in homeless count since 2012 (%)", "shrink": 0.6})
nd = joined[joined["STATE_ABBR"] == "ND"].iloc[0]
ax.annotate(f"North Dakota\n+{nd['Change']:.0f} %", nd.geometry.representative_point().coords[0], ha="center", fontsize=9, weight="bold")
ax.set_title("Change in homelessness 2012–2013: the North Dakota oil boom"); ax.set_axis_off()
fig.savefig("pred_results/homeless_change.png", dpi=100, bbox_inches="tight")
