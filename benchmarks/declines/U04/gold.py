# %% what data/ holds
import os
import pandas as pd
import geopandas as gpd
print(sorted(os.listdir("data")))
attrs = pd.read_csv("data/CampsiteAttributes.csv")
print("CampsiteAttributes.csv:", len(attrs), "records,", list(attrs.columns))
print(attrs["AttributeName"].value_counts())
# %% any fee in the attribute records or the other tables?
words = ("fee", "price", "rate", "cost", "dollar", "usd", "$")
print("fee-like attribute names:", [a for a in attrs["AttributeName"].unique() if any(w in a.lower() for w in words)] or "none")
for f in ["Campsites.geojson", "Facilities.geojson", "National_Parks.geojson"]:
    print(f, list(gpd.read_file(f"data/{f}").columns))
print("OrganizationsTable.csv", list(pd.read_csv("data/OrganizationsTable.csv").columns))
