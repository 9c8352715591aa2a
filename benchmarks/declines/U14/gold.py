# %% what data/ holds
import os
import json
import pandas as pd
print(sorted(os.listdir("data")))
with open("data/12500-tweets-2021-09-24_01-48-23.json") as fh:
    tweets = json.load(fh)
print(len(tweets), "tweets; keys:", sorted(tweets[0]))
# %% when were the tweets posted?
posted = pd.to_datetime(pd.Series([t["created_at"] for t in tweets]), format="%a %b %d %H:%M:%S %z %Y")
print("first:", posted.min(), "| last:", posted.max())
print("tweets per day:", posted.dt.strftime("%Y-%m-%d").value_counts().to_dict())
print("tweets in July 2021:", int(((posted.dt.year == 2021) & (posted.dt.month == 7)).sum()))
