parks = gpd.read_file("data/National_Parks.geojson")
orgs = pd.read_csv("data/OrganizationsTable.csv")
sites = gpd.read_file("data/Campsites.geojson")
fac = gpd.read_file("data/Facilities.geojson")
attrs = pd.read_csv("data/CampsiteAttributes.csv")
joined = parks.merge(orgs, on="OrgID", how="left")
joined.to_file("pred_results/parks_with_orgs.geojson", driver="GeoJSON")
print(joined[["UNIT_NAME", "OrgName", "OrgAbbrevName"]])
# %%
wide = attrs[attrs["EntityType"] == "Campsite"].pivot_table(index="EntityID", columns="AttributeName", values="AttributeValue", aggfunc="first")
table = sites.merge(fac[["FacilityID", "FacilityName"]], on="FacilityID", how="left")
table = gpd.sjoin(table, parks[["UNIT_NAME", "geometry"]], how="left", predicate="within").drop(columns="index_right")
table = table.merge(wide, left_on="CampsiteID", right_index=True, how="left")
cols = ["CampsiteID", "CampsiteName", "FacilityID", "FacilityName", "UNIT_NAME"] + list(wide.columns)
table[cols].to_csv("pred_results/campsites_with_attributes.csv", index=False)
print(len(table), "campsites,", len(wide.columns), "attribute columns")
# %%
s_utm, f_utm = sites.to_crs(26912), fac.to_crs(26912).set_index("FacilityID")
linked = s_utm[s_utm["FacilityID"].isin(f_utm.index)]
dist = linked.geometry.distance(gpd.GeoSeries(f_utm.loc[linked["FacilityID"]].geometry.values, index=linked.index, crs=26912))
checks = {"campsites_without_campground": int((~sites["FacilityID"].isin(fac["FacilityID"])).sum()),
          "campgrounds_without_campsites": int((~fac["FacilityID"].isin(sites["FacilityID"])).sum()),
          "campsites_without_attributes": int((~sites["CampsiteID"].isin(wide.index)).sum()),
          "campsites_farther_than_2km_from_campground": int((dist > 2000).sum())}
pd.DataFrame({"check": list(checks), "count": list(checks.values())}).to_csv("pred_results/relationship_check.csv", index=False)
print(checks)
