import matplotlib.pyplot as plt
pts = gpd.read_file("data/High_Blood_Level_Results.shp")
zips = gpd.read_file("data/Sacramento_ZIP_Codes.shp").to_crs(4326)
if pts.crs.to_epsg() != 4326:
    pts = pts.to_crs(4326)
pts["LonRound"] = pts.geometry.x.round(2)
pts["LatRound"] = pts.geometry.y.round(2)
original = len(set(zip(pts.geometry.x.round(8), pts.geometry.y.round(8))))
rounded = len(set(zip(pts.LonRound, pts.LatRound)))
print(original, rounded)
# %% rounded points, summary, map
anon = gpd.GeoDataFrame(pts.drop(columns=["House", "Street", "Unit", "FirstName", "LastName", "geometry"]),
                        geometry=gpd.points_from_xy(pts.LonRound, pts.LatRound), crs=4326)
anon.to_file("pred_results/High_Blood_Level_Results_Rounded.shp")
pd.DataFrame([{"original_locations": original, "rounded_locations": rounded,
               "reduction_percent": round(100 * (original - rounded) / original, 2)}]).to_csv("pred_results/rounding_summary.csv", index=False)
fig, ax = plt.subplots(figsize=(8, 8))
zips.plot(ax=ax, color="#eeeeee", edgecolor="grey")
sizes = anon.groupby(["LonRound", "LatRound"]).size().rename("n").reset_index()
ax.scatter(sizes.LonRound, sizes.LatRound, s=8 * sizes.n, c=sizes.n, cmap="viridis")
ax.set_title(f"De-identified cases: {original} locations → {rounded}")
fig.savefig("pred_results/rounded_points.png", dpi=110, bbox_inches="tight")
