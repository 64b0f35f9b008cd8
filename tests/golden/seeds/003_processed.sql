-- Seed 003 (/work/shared/seeds/003_c4760af5eedceb3a.txt): the dequeue and the clustered index, as the article
-- gives them, except that its placeholder table name TABLE (a reserved word) is written [TABLE].
with CTE as (
  SELECT TOP(1) COMMAND, PROCESSED
  FROM [TABLE] WITH (READPAST)
  WHERE PROCESSED = 0)
UPDATE CTE
  SET PROCESSED = 1
  OUTPUT INSERTED.*;
GO
CREATE CLUSTERED INDEX cdxTable on [TABLE](PROCESSED, ID);
