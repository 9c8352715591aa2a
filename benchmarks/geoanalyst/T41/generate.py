# Wyoming-like national parks, campgrounds, campsites (WGS 84) and the
# Recreation.gov-style tables: organisations and campsite attributes, with a
# few data-quality problems planted on purpose.
r = rng()
crs = 26912
parks = {"Yellowstone National Park": organic_polygon(540_000, 4_945_000, 45_000, r, 0.15),
         "Grand Teton National Park": shapely.affinity.scale(organic_polygon(520_000, 4_840_000, 22_000, rng(1), 0.2), 0.6, 1.4)}
orgs = pd.DataFrame({
    "OrgID": [128, 129, 130, 131], "OrgType": ["Federal Agency", "Park", "Park", "State Agency"],
    "OrgName": ["National Park Service", "Yellowstone National Park", "Grand Teton National Park", "Wyoming State Parks"],
    "OrgImageURL": ["nps.png", "yell.png", "grte.png", "wysp.png"],
    "OrgURLAddress": ["https://www.nps.gov", "https://www.nps.gov/yell", "https://www.nps.gov/grte", "https://wyoparks.wyo.gov"],
    "OrgAbbrevName": ["NPS", "YELL", "GRTE", "WYSP"], "OrgJurisdictionType": ["Federal", "Federal", "Federal", "State"],
    "OrgParentID": [0, 128, 128, 0], "LastUpdatedDate": "2019-06-30"})
orgs.to_csv("data/OrganizationsTable.csv", index=False)
gpd.GeoDataFrame({"UNIT_CODE": ["YELL", "GRTE"], "UNIT_NAME": list(parks), "OrgID": [129, 130], "ParentOrgID": [128, 128]},
                 geometry=list(parks.values()), crs=crs).to_crs(4326).to_file("data/National_Parks.geojson", driver="GeoJSON")
inside = points_in(parks["Yellowstone National Park"], 22, r) + points_in(parks["Grand Teton National Park"], 12, r)
outside = [Point(480_000 + 20_000 * k, 4_900_000 - 15_000 * (k % 2)) for k in range(6)]
grounds = inside + outside
names = ["Madison", "Norris", "Canyon", "Bridge Bay", "Grant Village", "Lewis Lake", "Slough Creek", "Pebble Creek", "Indian Creek",
         "Mammoth", "Tower Fall", "Fishing Bridge", "Jenny Lake", "Signal Mountain", "Colter Bay", "Lizard Creek", "Gros Ventre", "Headwaters"]
fac = gpd.GeoDataFrame({"FacilityID": np.arange(232_001, 232_001 + len(grounds)),
                        "FacilityName": [f"{names[k % len(names)]} Campground{'' if k < len(names) else ' ' + str(k // len(names) + 1)}" for k in range(len(grounds))],
                        "FacilityTypeDescription": "Campground", "ParentOrgID": [129] * 22 + [130] * 12 + [131] * 6},
                       geometry=grounds, crs=crs)
fac.loc[len(fac) - 1, "FacilityName"] = "Boysen Overflow Campground"            # a campground that will get no campsites
fac.to_crs(4326).to_file("data/Facilities.geojson", driver="GeoJSON")
sites = []
for fid, g in zip(fac["FacilityID"][:-1], fac.geometry[:-1]):
    for k in range(int(r.integers(10, 30))):
        d = r.uniform(20, 600); a = r.uniform(0, 2 * np.pi)
        sites.append({"FacilityID": int(fid), "CampsiteName": f"{k + 1:03d}", "geometry": Point(g.x + d * np.cos(a), g.y + d * np.sin(a))})
sites = gpd.GeoDataFrame(sites, crs=crs)
sites.insert(0, "CampsiteID", np.arange(80_001, 80_001 + len(sites)))
sites["CampsiteType"] = r.choice(["STANDARD NONELECTRIC", "TENT ONLY NONELECTRIC", "RV NONELECTRIC", "GROUP STANDARD NONELECTRIC"], len(sites), p=[0.6, 0.2, 0.15, 0.05])
orphans = r.choice(len(sites), 7, replace=False)
sites.loc[orphans, "FacilityID"] = 999_000 + np.arange(7)                        # point at no campground
strays = r.choice(np.setdiff1d(np.arange(len(sites)), orphans), 5, replace=False)
sites.loc[strays, "geometry"] = [Point(g.x + 9_000, g.y - 4_000) for g in sites.geometry[strays]]  # far from their campground
sites.to_crs(4326).to_file("data/Campsites.geojson", driver="GeoJSON")
recs = []
missing = set(r.choice(len(sites), 9, replace=False).tolist())
for i, cid in enumerate(sites["CampsiteID"]):
    if i in missing:
        continue
    values = {"Max Num of People": int(r.choice([6, 8, 10, 40])), "Driveway Length": int(r.integers(15, 60)),
              "Shade": str(r.choice(["Full", "Partial", "No"])), "Pets Allowed": str(r.choice(["Yes", "No", "Domestic"])),
              "Campfire Allowed": str(r.choice(["Yes", "No"]))}
    for name, value in values.items():
        recs.append({"AttributeName": name, "AttributeValue": value, "EntityID": int(cid), "EntityType": "Campsite"})
attrs = pd.DataFrame(recs)
attrs.insert(0, "AttributeID", np.arange(1, len(attrs) + 1))
attrs.to_csv("data/CampsiteAttributes.csv", index=False)
